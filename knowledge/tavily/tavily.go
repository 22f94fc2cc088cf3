// Package tavily searches the web with the Tavily Search API
// (POST /search with a JSON body, key as "Authorization: Bearer tvly-…").
package tavily

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/internal/web"
)

// DefaultURL is Tavily's API.
const DefaultURL = "https://api.tavily.com"

// Options configure the provider. APIKey is required.
type Options struct {
	APIKey  string
	BaseURL string // DefaultURL when empty
	Client  *http.Client
	Timeout time.Duration
}

// Searcher is Tavily.
type Searcher struct {
	key, base string
	web       web.Client
}

// New returns a Searcher.
func New(opts *Options) (*Searcher, error) {
	if opts == nil || opts.APIKey == "" {
		return nil, fmt.Errorf("tavily: %w: set TAVILY_API_KEY", knowledge.ErrNotConfigured)
	}
	base := strings.TrimRight(opts.BaseURL, "/")
	if base == "" {
		base = DefaultURL
	}
	return &Searcher{key: opts.APIKey, base: base, web: web.Client{Provider: "tavily", HTTP: opts.Client, Timeout: opts.Timeout}}, nil
}

func (s *Searcher) Name() string { return "tavily" }

type request struct {
	Query       string `json:"query"`
	MaxResults  int    `json:"max_results"`
	SearchDepth string `json:"search_depth"`
}

type response struct {
	Query   string `json:"query"`
	Results *[]struct {
		Title         string  `json:"title"`
		URL           string  `json:"url"`
		Content       string  `json:"content"`
		Score         float64 `json:"score"`
		PublishedDate string  `json:"published_date"`
	} `json:"results"`
}

// Search asks Tavily.
func (s *Searcher) Search(ctx context.Context, req *knowledge.SearchRequest) ([]knowledge.Result, error) {
	limit := web.Limit(req.Limit, 5, 20)
	body, _ := json.Marshal(request{Query: req.Query, MaxResults: limit, SearchDepth: "basic"})
	hr, err := http.NewRequest(http.MethodPost, s.base+"/search", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("tavily: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Authorization", "Bearer "+s.key)
	var r response
	if err := s.web.JSON(ctx, hr, &r); err != nil {
		return nil, err
	}
	if r.Results == nil {
		return nil, s.web.Malformed(fmt.Errorf("no results field"), nil)
	}
	var out []knowledge.Result
	for _, x := range *r.Results {
		if len(out) == limit {
			break
		}
		out = append(out, knowledge.Result{Title: x.Title, URL: x.URL, Snippet: x.Content, Provider: "tavily",
			Published: web.ParseTime(x.PublishedDate)})
	}
	return out, nil
}
