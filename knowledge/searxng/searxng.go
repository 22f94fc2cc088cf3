// Package searxng searches the web through a SearxNG instance's JSON API
// (GET /search?q=…&format=json; the instance must list "json" under search.formats).
package searxng

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/internal/web"
)

// Options configure the provider. BaseURL is required (e.g. http://localhost:8888).
type Options struct {
	BaseURL string
	Client  *http.Client
	Timeout time.Duration
}

// Searcher is a SearxNG instance.
type Searcher struct {
	base *url.URL
	web  web.Client
}

// New returns a Searcher for the instance at opts.BaseURL.
func New(opts *Options) (*Searcher, error) {
	if opts == nil || opts.BaseURL == "" {
		return nil, fmt.Errorf("searxng: %w: set SEARXNG_URL to your instance", knowledge.ErrNotConfigured)
	}
	u, err := url.Parse(strings.TrimRight(opts.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("searxng: %w: SEARXNG_URL %q is not an http(s) URL", knowledge.ErrNotConfigured, opts.BaseURL)
	}
	return &Searcher{base: u, web: web.Client{Provider: "searxng", HTTP: opts.Client, Timeout: opts.Timeout}}, nil
}

func (s *Searcher) Name() string { return "searxng" }

type response struct {
	Query   *string `json:"query"`
	Results []struct {
		URL           string   `json:"url"`
		Title         string   `json:"title"`
		Content       string   `json:"content"`
		Engine        string   `json:"engine"`
		Engines       []string `json:"engines"`
		PublishedDate *string  `json:"publishedDate"`
	} `json:"results"`
}

// Search asks the instance.
func (s *Searcher) Search(ctx context.Context, req *knowledge.SearchRequest) ([]knowledge.Result, error) {
	u := *s.base
	u.Path += "/search"
	u.RawQuery = url.Values{"q": {req.Query}, "format": {"json"}}.Encode()
	hr, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("searxng: %w", err)
	}
	var r response
	if err := s.web.JSON(ctx, hr, &r); err != nil {
		return nil, err
	}
	if r.Results == nil && r.Query == nil {
		return nil, s.web.Malformed(fmt.Errorf("no results or query field"), nil)
	}
	limit := web.Limit(req.Limit, 10, 50)
	var out []knowledge.Result
	for _, x := range r.Results {
		if len(out) == limit {
			break
		}
		if x.URL == "" {
			continue
		}
		res := knowledge.Result{Title: x.Title, URL: x.URL, Snippet: x.Content, Provider: "searxng"}
		if x.PublishedDate != nil {
			res.Published = web.ParseTime(*x.PublishedDate)
		}
		out = append(out, res)
	}
	return out, nil
}
