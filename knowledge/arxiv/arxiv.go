// Package arxiv searches arXiv's papers with its Atom API
// (GET /api/query?search_query=all:…&start=0&max_results=…). arXiv reports a bad query as a
// feed with one entry titled "Error"; that becomes knowledge.ErrBadRequest.
package arxiv

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/internal/web"
)

// DefaultURL is arXiv's export API host.
const DefaultURL = "https://export.arxiv.org"

// Options configure the provider. nil means defaults.
type Options struct {
	BaseURL string // DefaultURL when empty
	Client  *http.Client
	Timeout time.Duration
}

// Searcher is arXiv.
type Searcher struct {
	base string
	web  web.Client
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
	return &Searcher{base: base, web: web.Client{Provider: "arxiv", HTTP: opts.Client, Timeout: opts.Timeout}}
}

func (s *Searcher) Name() string { return "arxiv" }

type feed struct {
	XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
	Entries []struct {
		ID        string `xml:"http://www.w3.org/2005/Atom id"`
		Title     string `xml:"http://www.w3.org/2005/Atom title"`
		Summary   string `xml:"http://www.w3.org/2005/Atom summary"`
		Published string `xml:"http://www.w3.org/2005/Atom published"`
		Authors   []struct {
			Name string `xml:"http://www.w3.org/2005/Atom name"`
		} `xml:"http://www.w3.org/2005/Atom author"`
		Links []struct {
			Href  string `xml:"href,attr"`
			Rel   string `xml:"rel,attr"`
			Type  string `xml:"type,attr"`
			Title string `xml:"title,attr"`
		} `xml:"http://www.w3.org/2005/Atom link"`
		DOI        string `xml:"http://arxiv.org/schemas/atom doi"`
		JournalRef string `xml:"http://arxiv.org/schemas/atom journal_ref"`
	} `xml:"http://www.w3.org/2005/Atom entry"`
}

// Search asks arXiv. The query is searched in all fields unless it already uses arXiv's field
// prefixes (ti:, au:, abs:, cat:, all: …).
func (s *Searcher) Search(ctx context.Context, req *knowledge.SearchRequest) ([]knowledge.Result, error) {
	q := strings.TrimSpace(req.Query)
	if !strings.Contains(q, ":") {
		q = "all:" + strings.Join(strings.Fields(q), " AND all:")
	}
	limit := web.Limit(req.Limit, 10, 50)
	v := url.Values{"search_query": {q}, "start": {"0"}, "max_results": {strconv.Itoa(limit)}}
	hr, err := http.NewRequest(http.MethodGet, s.base+"/api/query?"+v.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("arxiv: %w", err)
	}
	hr.Header.Set("Accept", "application/atom+xml")
	body, err := s.web.Do(ctx, hr)
	if err != nil {
		return nil, err
	}
	var f feed
	if err := xml.Unmarshal(body, &f); err != nil {
		return nil, s.web.Malformed(err, body)
	}
	var out []knowledge.Result
	for _, e := range f.Entries {
		if strings.Contains(e.ID, "/api/errors") || strings.TrimSpace(e.Title) == "Error" {
			return nil, &knowledge.ProviderError{Provider: "arxiv", Status: 200, Err: knowledge.ErrBadRequest,
				Detail: strings.TrimSpace(e.Summary)}
		}
		r := knowledge.Result{
			Title:     oneLine(e.Title),
			URL:       strings.TrimSpace(e.ID),
			Snippet:   oneLine(e.Summary),
			Provider:  "arxiv",
			Published: web.ParseTime(e.Published),
			DOI:       strings.TrimSpace(e.DOI),
			Venue:     oneLine(e.JournalRef),
		}
		for _, l := range e.Links {
			if l.Rel == "alternate" && l.Href != "" {
				r.URL = l.Href
			}
		}
		for _, a := range e.Authors {
			r.Authors = append(r.Authors, oneLine(a.Name))
		}
		if r.Venue == "" {
			r.Venue = "arXiv"
		}
		out = append(out, r)
	}
	return out, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
