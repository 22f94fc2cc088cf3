// Package knowledge is what the agent reads besides its own memory: a documentation index over
// local files and the help of the installed software, web search, literature search and page
// fetching. Every result carries where it came from, so answers can cite it, and everything that
// came from outside is marked untrusted by the tools that hand it to a model.
//
// The package holds the types and the small interfaces; implementations live in sub-packages:
// sqlite (the documentation index), extract (files and pages to text), fetch (URL to a bounded,
// cleaned document), harvest (Octave and pydoc help), searxng, brave, tavily, arxiv and crossref
// (web and literature providers) and tools (the agent's tools). Only cmd/labmate wires them.
package knowledge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Doc is one document to index: a file, a page, or one function's help text.
type Doc struct {
	// Source is where the document lives: a file path, a URL, or "octave:NAME"-style reference.
	Source string `json:"source"`
	// Title names the document (a function name, a page title); may be empty.
	Title string `json:"title,omitempty"`
	// Format is "markdown", "text", or "help" (one function's help: Title is its name and the first
	// sentence is its summary). HTML and PDF are turned into markdown or text before indexing.
	Format string `json:"format"`
	// Text is the content, lines separated by "\n".
	Text string `json:"text"`
	// Summary is the one-line description of a "help" document; the first sentence when empty.
	Summary string `json:"summary,omitempty"`
	// Heading is the section the document belongs to (a help category); chunk headings nest under it.
	Heading string `json:"heading,omitempty"`
	// Line is the line of Source that Text's first line is (1 when zero).
	Line int `json:"line,omitempty"`
}

// Chunk is a piece of a document small enough to quote: one section under one heading.
type Chunk struct {
	// ID identifies the chunk: "source#Lstart" from Split, the index's own id in a Hit.
	ID      string `json:"id"`
	Source  string `json:"source"`
	Heading string `json:"heading,omitempty"` // the heading path, "A > B > C"
	// Name is the function or page name, weighted above the body when ranking.
	Name string `json:"name,omitempty"`
	// Summary is the first sentence, weighted between the name and the body.
	Summary   string `json:"summary,omitempty"`
	Text      string `json:"text"`
	StartLine int    `json:"start_line"` // 1-based, inclusive
	EndLine   int    `json:"end_line"`   // 1-based, inclusive
}

// Cite is the chunk's citation: source:start-end (heading).
func (c *Chunk) Cite() string {
	s := fmt.Sprintf("%s:%d-%d", c.Source, c.StartLine, c.EndLine)
	if c.Heading != "" {
		s += " (" + c.Heading + ")"
	}
	return s
}

// Hit is one search result from an Index.
type Hit struct {
	Chunk
	Score float64 `json:"score"`
}

// Query asks an Index for chunks.
type Query struct {
	Text   string
	Limit  int    // 10 when zero
	Source string // only chunks whose source starts with this, when not empty
}

// Index is a searchable store of documentation chunks.
type Index interface {
	// Add chunks docs and stores them, replacing any earlier chunks of the same sources.
	Add(ctx context.Context, docs ...*Doc) error
	// Search returns the best chunks for q, best first.
	Search(ctx context.Context, q *Query) ([]Hit, error)
}

// Result is one web or literature search result.
type Result struct {
	Title     string    `json:"title"`
	URL       string    `json:"url"`
	Snippet   string    `json:"snippet,omitempty"`
	Provider  string    `json:"provider"`
	Published time.Time `json:"published,omitzero"`
	// Papers only.
	Authors []string `json:"authors,omitempty"`
	DOI     string   `json:"doi,omitempty"`
	Venue   string   `json:"venue,omitempty"`
}

// SearchRequest asks a Searcher.
type SearchRequest struct {
	Query string
	Limit int // provider default when zero
}

// Searcher is a web or literature search provider.
type Searcher interface {
	Name() string
	Search(ctx context.Context, req *SearchRequest) ([]Result, error)
}

// Page is a fetched, cleaned document.
type Page struct {
	URL         string `json:"url"` // after redirects
	Title       string `json:"title,omitempty"`
	ContentType string `json:"content_type"`
	Text        string `json:"text"`
	Truncated   bool   `json:"truncated,omitempty"` // Text was cut to the fetcher's text limit
}

// Fetcher turns a URL into a bounded, cleaned document.
type Fetcher interface {
	Fetch(ctx context.Context, url string) (*Page, error)
}

// Errors the implementations return, wrapped, so callers can tell them apart with errors.Is.
var (
	ErrNotConfigured = errors.New("not configured")
	ErrAuth          = errors.New("authentication failed")    // 401, 403: check the key
	ErrRateLimited   = errors.New("rate limited")             // 429: see ProviderError.RetryAfter
	ErrUnavailable   = errors.New("provider unavailable")     // 5xx, timeout, connection refused
	ErrBadResponse   = errors.New("malformed response")       // the body is not what the API documents
	ErrBadRequest    = errors.New("request rejected")         // other 4xx
	ErrTooLarge      = errors.New("too large")                // a body beyond the size limit
	ErrRedirects     = errors.New("too many redirects")       // a loop or a chain beyond the limit
	ErrUnsupported   = errors.New("unsupported content")      // binary, or a type we cannot read
	ErrUnreadable    = errors.New("unreadable document")      // a PDF or page that does not parse
	ErrBadSource     = errors.New("bad documentation source") // a path or harvest that cannot be indexed
)

// ProviderError is a failed call to a provider that answered (or timed out).
type ProviderError struct {
	Provider   string
	Status     int           // HTTP status, 0 when none
	RetryAfter time.Duration // from Retry-After on 429/503, 0 when absent
	Err        error         // one of the sentinels above, first
	Detail     string        // the provider's own message, bounded
}

func (e *ProviderError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v", e.Provider, e.Err)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, ", retry after %s", e.RetryAfter)
	}
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	return b.String()
}

func (e *ProviderError) Unwrap() error { return e.Err }
