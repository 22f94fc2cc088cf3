// Package tools gives the agent its knowledge tools: search_docs, search_web, search_papers and
// fetch_url. Everything they return came from outside the run (files, pages, papers), so every
// result is marked Untrusted, which the agent quotes to the model as material to read, never as
// instructions, and carries its Sources for citation. A provider that is not configured is a
// clear result saying what to set; nothing reaches the network unless a provider is configured.
package tools

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/tool"
)

// Config is what the tools use. Any part may be missing; its tool then says so.
type Config struct {
	Index   knowledge.Index
	Web     []knowledge.Searcher // tried in order until one answers
	Papers  []knowledge.Searcher // all asked, results interleaved
	Fetcher knowledge.Fetcher
	// MaxChars bounds the text of one result the model reads (default 1500 per hit, 20 000 per page).
	MaxChars int
}

// Names of the tools.
const (
	SearchDocs   = "search_docs"
	SearchWeb    = "search_web"
	SearchPapers = "search_papers"
	FetchURL     = "fetch_url"
)

// WebEnv and PaperEnv name the settings that configure the providers, for "not configured" results.
const (
	WebEnv   = "SEARXNG_URL, BRAVE_API_KEY or TAVILY_API_KEY"
	PaperEnv = "LABMATE_PAPERS=arxiv,crossref"
)

// DocsQuery is the input of search_docs.
type DocsQuery struct {
	Query  string `json:"query" jsonschema:"what to look up, in words (a task, a function name, an error message)"`
	N      int    `json:"n,omitempty" jsonschema:"how many sections to return (default 5, at most 20)"`
	Source string `json:"source,omitempty" jsonschema:"only sources starting with this, e.g. octave: or python:numpy"`
}

// DocHit is one documentation section search_docs found.
type DocHit struct {
	Cite    string  `json:"cite" jsonschema:"source:lines (heading), to cite"`
	Source  string  `json:"source"`
	Name    string  `json:"name,omitempty"`
	Summary string  `json:"summary,omitempty"`
	Text    string  `json:"text"`
	Score   float64 `json:"score"`
}

// DocHits are search_docs's structured result: the sections, best first.
type DocHits struct {
	Hits []DocHit `json:"hits"`
}

// WebQuery is the input of search_web and search_papers.
type WebQuery struct {
	Query string `json:"query" jsonschema:"the search query"`
	N     int    `json:"n,omitempty" jsonschema:"how many results (default 5, at most 20)"`
}

// FetchInput is the input of fetch_url.
type FetchInput struct {
	URL string `json:"url" jsonschema:"an http or https URL to read"`
}

// New returns the four tools over cfg.
func New(cfg *Config) []tool.Tool {
	if cfg == nil {
		cfg = &Config{}
	}
	c := *cfg
	return []tool.Tool{
		c.docs(),
		tool.Must(SearchWeb, "Search the web. Returns titles, URLs and snippets; read a page with fetch_url.", c.searchWeb),
		tool.Must(SearchPapers, "Search scientific papers (arXiv, Crossref); a DOI looks that paper up. Returns title, authors, venue, year, DOI, URL.", c.searchPapers),
		tool.Must(FetchURL, "Read a web page or PDF as cleaned text (size- and time-limited).", c.fetchURL),
	}
}

// Docs is search_docs alone, over index.
func Docs(index knowledge.Index) tool.Tool { return Config{Index: index}.docs() }

func (c Config) docs() tool.Tool {
	return tool.Must(SearchDocs, "Search the documentation index: the help of the installed Octave functions and Python modules "+
		"and indexed manuals. Returns sections with their source (file:lines) to cite.", c.searchDocs)
}

func clamp(n, def int) int {
	if n <= 0 {
		return def
	}
	return min(n, 20)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + " […]"
}

func (c Config) searchDocs(ctx context.Context, in DocsQuery) (*tool.Result, error) {
	if c.Index == nil {
		return tool.Errorf("%s: not configured: no documentation index (run labmate docs index --octave, or labmate docs index PATH)", SearchDocs), nil
	}
	if strings.TrimSpace(in.Query) == "" {
		return tool.Errorf("%s: query is empty", SearchDocs), nil
	}
	hits, err := c.Index.Search(ctx, &knowledge.Query{Text: in.Query, Limit: clamp(in.N, 5), Source: in.Source})
	if err != nil {
		return nil, err
	}
	data := DocHits{Hits: []DocHit{}}
	for _, h := range hits {
		data.Hits = append(data.Hits, DocHit{Cite: h.Cite(), Source: h.Source, Name: h.Name, Summary: h.Summary, Text: h.Text, Score: h.Score})
	}
	if len(hits) == 0 {
		return &tool.Result{Content: fmt.Sprintf("No documentation matches %q; the index may be empty (labmate docs index --octave, labmate docs index --python numpy,scipy).", in.Query), Data: data}, nil
	}
	max := c.MaxChars
	if max == 0 {
		max = 1500
	}
	var b strings.Builder
	res := &tool.Result{Untrusted: true, Data: data}
	for i, h := range hits {
		cite := h.Cite()
		res.Sources = append(res.Sources, cite)
		fmt.Fprintf(&b, "[%d] %s\n%s\n\n", i+1, cite, cut(h.Text, max))
	}
	res.Content = strings.TrimSpace(b.String())
	return res, nil
}

func formatResults(rs []knowledge.Result) *tool.Result {
	var b strings.Builder
	res := &tool.Result{Untrusted: true, Data: rs}
	for i, r := range rs {
		res.Sources = append(res.Sources, r.URL)
		fmt.Fprintf(&b, "[%d] %s\n    %s\n", i+1, r.Title, r.URL)
		var meta []string
		if len(r.Authors) > 0 {
			a := strings.Join(r.Authors[:min(3, len(r.Authors))], ", ")
			if len(r.Authors) > 3 {
				a += " et al."
			}
			meta = append(meta, a)
		}
		if r.Venue != "" {
			meta = append(meta, r.Venue)
		}
		if !r.Published.IsZero() {
			meta = append(meta, r.Published.Format("2006-01-02"))
		}
		if r.DOI != "" {
			meta = append(meta, "doi:"+r.DOI)
		}
		meta = append(meta, "via "+r.Provider)
		fmt.Fprintf(&b, "    %s\n", strings.Join(meta, " · "))
		if r.Snippet != "" {
			fmt.Fprintf(&b, "    %s\n", cut(r.Snippet, 600))
		}
	}
	res.Content = strings.TrimRight(b.String(), "\n")
	return res
}

func (c Config) searchWeb(ctx context.Context, in WebQuery) (*tool.Result, error) {
	if len(c.Web) == 0 {
		return tool.Errorf("%s: not configured: set %s to enable web search (without it, no web results can be given)", SearchWeb, WebEnv), nil
	}
	var errs []string
	for _, s := range c.Web {
		rs, err := s.Search(ctx, &knowledge.SearchRequest{Query: in.Query, Limit: clamp(in.N, 5)})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			errs = append(errs, err.Error())
			continue
		}
		if len(rs) == 0 {
			return &tool.Result{Content: fmt.Sprintf("No web results for %q (via %s).", in.Query, s.Name())}, nil
		}
		return formatResults(rs), nil
	}
	return nil, fmt.Errorf("every web provider failed: %s", strings.Join(errs, "; "))
}

func (c Config) searchPapers(ctx context.Context, in WebQuery) (*tool.Result, error) {
	if len(c.Papers) == 0 {
		return tool.Errorf("%s: not configured: set %s to enable literature search (without it, no papers can be given)", SearchPapers, PaperEnv), nil
	}
	n := clamp(in.N, 5)
	lists := make([][]knowledge.Result, len(c.Papers))
	errs := make([]error, len(c.Papers))
	var wg sync.WaitGroup
	for i, s := range c.Papers {
		wg.Go(func() {
			lists[i], errs[i] = s.Search(ctx, &knowledge.SearchRequest{Query: in.Query, Limit: n})
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var all []knowledge.Result
	var failed []string
	for i := range n {
		for j, l := range lists {
			if errs[j] == nil && i < len(l) {
				all = append(all, l[i])
			}
		}
	}
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(all) == 0 && len(failed) > 0 {
		return nil, fmt.Errorf("every literature provider failed: %s", strings.Join(failed, "; "))
	}
	if len(all) == 0 {
		return &tool.Result{Content: fmt.Sprintf("No papers found for %q.", in.Query)}, nil
	}
	res := formatResults(all)
	if len(failed) > 0 {
		res.Content += "\n(also failed: " + strings.Join(failed, "; ") + ")"
	}
	return res, nil
}

func (c Config) fetchURL(ctx context.Context, in FetchInput) (*tool.Result, error) {
	if c.Fetcher == nil {
		return tool.Errorf("%s: not configured: fetching pages is off (set LABMATE_FETCH=1 or configure a web provider)", FetchURL), nil
	}
	p, err := c.Fetcher.Fetch(ctx, in.URL)
	if err != nil {
		return nil, err
	}
	max := c.MaxChars
	if max == 0 {
		max = 20_000
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Page: %s\n", p.URL)
	if p.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n", p.Title)
	}
	b.WriteString("\n")
	b.WriteString(cut(p.Text, max))
	if p.Truncated || len(p.Text) > max {
		b.WriteString("\n[the page is longer; this is its beginning]")
	}
	return &tool.Result{Content: b.String(), Untrusted: true, Sources: []string{p.URL}, Data: p}, nil
}
