// Package brave searches the web with the Brave Search API
// (GET /res/v1/web/search?q=…&count=…, key in the X-Subscription-Token header).
package brave

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/internal/web"
)

// DefaultURL is Brave Search's API.
const DefaultURL = "https://api.search.brave.com"

// Options configure the provider. APIKey is required.
type Options struct {
	APIKey  string
	BaseURL string // DefaultURL when empty
	Client  *http.Client
	Timeout time.Duration
}

// Searcher is Brave Search.
type Searcher struct {
	key, base string
	web       web.Client
}

// New returns a Searcher.
func New(opts *Options) (*Searcher, error) {
	if opts == nil || opts.APIKey == "" {
		return nil, fmt.Errorf("brave: %w: set BRAVE_API_KEY", knowledge.ErrNotConfigured)
	}
	base := strings.TrimRight(opts.BaseURL, "/")
	if base == "" {
		base = DefaultURL
	}
	return &Searcher{key: opts.APIKey, base: base, web: web.Client{Provider: "brave", HTTP: opts.Client, Timeout: opts.Timeout}}, nil
}

func (s *Searcher) Name() string { return "brave" }

type response struct {
	Type string `json:"type"`
	Web  *struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
			PageAge     string `json:"page_age"`
		} `json:"results"`
	} `json:"web"`
}

// Search asks Brave.
func (s *Searcher) Search(ctx context.Context, req *knowledge.SearchRequest) ([]knowledge.Result, error) {
	limit := web.Limit(req.Limit, 10, 20)
	q := url.Values{"q": {req.Query}, "count": {strconv.Itoa(limit)}}
	hr, err := http.NewRequest(http.MethodGet, s.base+"/res/v1/web/search?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("brave: %w", err)
	}
	hr.Header.Set("X-Subscription-Token", s.key)
	var r response
	if err := s.web.JSON(ctx, hr, &r); err != nil {
		return nil, err
	}
	if r.Type != "search" {
		return nil, s.web.Malformed(fmt.Errorf("type is %q, not \"search\"", r.Type), nil)
	}
	var out []knowledge.Result
	if r.Web == nil {
		return out, nil // no web results for this query
	}
	for _, x := range r.Web.Results {
		if len(out) == limit {
			break
		}
		out = append(out, knowledge.Result{Title: stripTags(x.Title), URL: x.URL, Snippet: stripTags(x.Description),
			Provider: "brave", Published: web.ParseTime(x.PageAge)})
	}
	return out, nil
}

// stripTags removes the <strong> highlighting Brave puts in titles and descriptions.
func stripTags(s string) string {
	r := strings.NewReplacer("<strong>", "", "</strong>", "", "<b>", "", "</b>", "")
	return r.Replace(s)
}
