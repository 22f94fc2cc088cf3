// Package crossref finds papers and their DOI metadata with the Crossref REST API:
// GET /works?query=…&rows=… to search, GET /works/{doi} when the query is a DOI.
package crossref

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/internal/web"
)

// DefaultURL is Crossref's API.
const DefaultURL = "https://api.crossref.org"

// Options configure the provider. nil means defaults.
type Options struct {
	BaseURL string // DefaultURL when empty
	// Mailto puts requests in Crossref's "polite pool" (CROSSREF_MAILTO).
	Mailto  string
	Client  *http.Client
	Timeout time.Duration
}

// Searcher is Crossref.
type Searcher struct {
	base, mailto string
	web          web.Client
}

// New returns a Searcher.
func New(opts *Options) *Searcher {
	if opts == nil {
		opts = &Options{}
	}
	base := strings.TrimRight(opts.BaseURL, "/")
	if base == "" {
		base = DefaultURL
	}
	return &Searcher{base: base, mailto: opts.Mailto, web: web.Client{Provider: "crossref", HTTP: opts.Client, Timeout: opts.Timeout}}
}

func (s *Searcher) Name() string { return "crossref" }

type work struct {
	DOI            string   `json:"DOI"`
	URL            string   `json:"URL"`
	Title          []string `json:"title"`
	ContainerTitle []string `json:"container-title"`
	Abstract       string   `json:"abstract"`
	Author         []struct {
		Given  string `json:"given"`
		Family string `json:"family"`
		Name   string `json:"name"`
	} `json:"author"`
	Published *struct {
		DateParts [][]int `json:"date-parts"`
	} `json:"published"`
}

type envelope struct {
	Status      string          `json:"status"`
	MessageType string          `json:"message-type"`
	Message     json.RawMessage `json:"message"`
}

var doiRE = regexp.MustCompile(`^(?:https?://(?:dx\.)?doi\.org/|doi:)?(10\.\d{4,9}/\S+)$`)

// Search asks Crossref; a query that is a DOI looks that work up.
func (s *Searcher) Search(ctx context.Context, req *knowledge.SearchRequest) ([]knowledge.Result, error) {
	q := strings.TrimSpace(req.Query)
	v := url.Values{}
	if s.mailto != "" {
		v.Set("mailto", s.mailto)
	}
	var path string
	if m := doiRE.FindStringSubmatch(q); m != nil {
		path = "/works/" + url.PathEscape(m[1])
	} else {
		path = "/works"
		v.Set("query", q)
		v.Set("rows", strconv.Itoa(web.Limit(req.Limit, 10, 50)))
	}
	u := s.base + path
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	hr, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("crossref: %w", err)
	}
	var env envelope
	if err := s.web.JSON(ctx, hr, &env); err != nil {
		return nil, err
	}
	if env.Status != "ok" {
		return nil, s.web.Malformed(fmt.Errorf("status is %q, not \"ok\"", env.Status), env.Message)
	}
	var works []work
	switch env.MessageType {
	case "work":
		var w work
		if err := json.Unmarshal(env.Message, &w); err != nil {
			return nil, s.web.Malformed(err, env.Message)
		}
		works = []work{w}
	case "work-list":
		var list struct {
			Items *[]work `json:"items"`
		}
		if err := json.Unmarshal(env.Message, &list); err != nil {
			return nil, s.web.Malformed(err, env.Message)
		}
		if list.Items == nil {
			return nil, s.web.Malformed(fmt.Errorf("a work-list without items"), env.Message)
		}
		works = *list.Items
	default:
		return nil, s.web.Malformed(fmt.Errorf("message-type %q", env.MessageType), env.Message)
	}
	out := make([]knowledge.Result, 0, len(works))
	for _, w := range works {
		r := knowledge.Result{Provider: "crossref", DOI: w.DOI, URL: w.URL, Snippet: stripJATS(w.Abstract)}
		if len(w.Title) > 0 {
			r.Title = w.Title[0]
		}
		if len(w.ContainerTitle) > 0 {
			r.Venue = w.ContainerTitle[0]
		}
		if r.URL == "" && w.DOI != "" {
			r.URL = "https://doi.org/" + w.DOI
		}
		for _, a := range w.Author {
			name := strings.TrimSpace(a.Given + " " + a.Family)
			if name == "" {
				name = a.Name
			}
			r.Authors = append(r.Authors, name)
		}
		if w.Published != nil && len(w.Published.DateParts) > 0 && len(w.Published.DateParts[0]) > 0 {
			p := append(w.Published.DateParts[0], 1, 1)
			r.Published = time.Date(p[0], time.Month(max(p[1], 1)), max(p[2], 1), 0, 0, 0, 0, time.UTC)
		}
		out = append(out, r)
	}
	return out, nil
}

var tags = regexp.MustCompile(`<[^>]+>`)

// stripJATS removes the JATS XML tags Crossref abstracts carry.
func stripJATS(s string) string {
	return strings.Join(strings.Fields(tags.ReplaceAllString(s, " ")), " ")
}
