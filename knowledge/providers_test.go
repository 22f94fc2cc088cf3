package knowledge_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/arxiv"
	"github.com/labmate/labmate/knowledge/brave"
	"github.com/labmate/labmate/knowledge/crossref"
	"github.com/labmate/labmate/knowledge/searxng"
	"github.com/labmate/labmate/knowledge/tavily"
)

// Bodies in each provider's documented wire format.
const (
	searxngOK = `{"query": "stiff ode solver", "number_of_results": 0, "results": [
 {"url": "https://example.org/bdf", "title": "BDF methods", "content": "Backward differentiation formulas for stiff problems.",
  "engine": "duckduckgo", "parsed_url": ["https", "example.org", "/bdf", "", "", ""], "engines": ["duckduckgo"],
  "positions": [1], "score": 1.0, "category": "general", "publishedDate": "2024-03-01T00:00:00"},
 {"url": "https://example.org/rosenbrock", "title": "Rosenbrock methods", "content": "Linearly implicit.", "engine": "brave",
  "engines": ["brave"], "positions": [2], "score": 0.5, "category": "general", "publishedDate": null}],
 "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}`
	braveOK = `{"type": "search", "query": {"original": "stiff ode solver", "more_results_available": true},
 "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}]},
 "web": {"type": "search", "family_friendly": true, "results": [
  {"title": "BDF <strong>methods</strong>", "url": "https://example.org/bdf", "is_source_local": false,
   "description": "Backward differentiation formulas for <strong>stiff</strong> problems.", "page_age": "2024-03-01T00:00:00",
   "profile": {"name": "Example"}, "language": "en", "family_friendly": true, "type": "search_result", "age": "March 1, 2024"},
  {"title": "Rosenbrock methods", "url": "https://example.org/rosenbrock", "description": "Linearly implicit.", "type": "search_result"}]}}`
	tavilyOK = `{"query": "stiff ode solver", "follow_up_questions": null, "answer": null, "images": [],
 "results": [{"title": "BDF methods", "url": "https://example.org/bdf", "content": "Backward differentiation formulas for stiff problems.",
  "score": 0.91, "raw_content": null},
  {"title": "Rosenbrock methods", "url": "https://example.org/rosenbrock", "content": "Linearly implicit.", "score": 0.5, "raw_content": null}],
 "response_time": 1.09, "request_id": "123e4567-e89b-12d3-a456-426614174111"}`
	arxivOK = `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <link href="http://arxiv.org/api/query?search_query%3Dall%3Astiff&amp;id_list%3D&amp;start%3D0&amp;max_results%3D2" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query: search_query=all:stiff&amp;id_list=&amp;start=0&amp;max_results=2</title>
  <id>http://arxiv.org/api/cHxbiOdZaP56ODnBPIenZhzg5f8</id>
  <updated>2024-03-01T00:00:00-05:00</updated>
  <opensearch:totalResults>1500</opensearch:totalResults>
  <opensearch:startIndex>0</opensearch:startIndex>
  <opensearch:itemsPerPage>2</opensearch:itemsPerPage>
  <entry>
    <id>http://arxiv.org/abs/2101.00001v2</id>
    <updated>2021-02-01T00:00:00Z</updated>
    <published>2021-01-01T10:00:00Z</published>
    <title>Adaptive BDF Methods
      for Stiff Systems</title>
    <summary>  We study variable-order BDF methods.
    </summary>
    <author><name>Ada Lovelace</name></author>
    <author><name>Alan Turing</name><arxiv:affiliation>Manchester</arxiv:affiliation></author>
    <arxiv:doi>10.1000/xyz123</arxiv:doi>
    <link title="doi" href="http://dx.doi.org/10.1000/xyz123" rel="related"/>
    <arxiv:comment>12 pages</arxiv:comment>
    <arxiv:journal_ref>J. Comput. Phys. 400 (2021)</arxiv:journal_ref>
    <link href="http://arxiv.org/abs/2101.00001v2" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/2101.00001v2" rel="related" type="application/pdf"/>
    <arxiv:primary_category term="math.NA" scheme="http://arxiv.org/schemas/atom"/>
    <category term="math.NA" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
  <entry>
    <id>http://arxiv.org/abs/2102.00002v1</id>
    <published>2021-02-02T10:00:00Z</published>
    <title>Rosenbrock methods</title>
    <summary>Linearly implicit.</summary>
    <author><name>Grace Hopper</name></author>
    <link href="http://arxiv.org/abs/2102.00002v1" rel="alternate" type="text/html"/>
  </entry>
</feed>`
	crossrefOK = `{"status":"ok","message-type":"work-list","message-version":"1.0.0","message":{"facets":{},"total-results":2,
 "items":[{"DOI":"10.1000/xyz123","URL":"https://doi.org/10.1000/xyz123","title":["Adaptive BDF Methods for Stiff Systems"],
  "container-title":["Journal of Computational Physics"],"author":[{"given":"Ada","family":"Lovelace","sequence":"first","affiliation":[]},
  {"given":"Alan","family":"Turing","sequence":"additional","affiliation":[]}],"published":{"date-parts":[[2021,1,5]]},
  "abstract":"<jats:p>We study variable-order BDF methods.</jats:p>","type":"journal-article","score":42.1},
  {"DOI":"10.1000/abc","URL":"https://doi.org/10.1000/abc","title":["Rosenbrock methods"],"author":[{"name":"Numerics Group"}],
   "published":{"date-parts":[[2019]]},"type":"journal-article"}],"items-per-page":2,"query":{"start-index":0,"search-terms":"stiff ode solver"}}}`
)

type provider struct {
	name  string
	new   func(base string) (knowledge.Searcher, error)
	ok    string              // a 2xx body
	check func(*http.Request) // what a correct request carries
	want  knowledge.Result    // the first result
	bad   []string            // malformed 2xx bodies
}

var providers = []provider{
	{
		name: "searxng",
		new: func(base string) (knowledge.Searcher, error) {
			return searxng.New(&searxng.Options{BaseURL: base, Timeout: 300 * time.Millisecond})
		},
		ok: searxngOK,
		check: func(r *http.Request) {
			if r.Method != "GET" || r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" || r.URL.Query().Get("q") != "stiff ode solver" {
				panic(fmt.Sprintf("bad request %s %s", r.Method, r.URL))
			}
		},
		want: knowledge.Result{Title: "BDF methods", URL: "https://example.org/bdf", Snippet: "Backward differentiation formulas for stiff problems.",
			Provider: "searxng", Published: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)},
		bad: []string{`<html>Too Many Requests</html>`, `{"unexpected": true}`, `{"results": "nope"}`},
	},
	{
		name: "brave",
		new: func(base string) (knowledge.Searcher, error) {
			return brave.New(&brave.Options{APIKey: "BSA-key", BaseURL: base, Timeout: 300 * time.Millisecond})
		},
		ok: braveOK,
		check: func(r *http.Request) {
			if r.URL.Path != "/res/v1/web/search" || r.Header.Get("X-Subscription-Token") != "BSA-key" || r.URL.Query().Get("q") != "stiff ode solver" || r.URL.Query().Get("count") != "2" {
				panic(fmt.Sprintf("bad request %s %v", r.URL, r.Header))
			}
		},
		want: knowledge.Result{Title: "BDF methods", URL: "https://example.org/bdf", Snippet: "Backward differentiation formulas for stiff problems.",
			Provider: "brave", Published: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)},
		bad: []string{`{"type": "ErrorResponse"}`, `{"type": "search", "web": {"results": 3}}`, `not json`},
	},
	{
		name: "tavily",
		new: func(base string) (knowledge.Searcher, error) {
			return tavily.New(&tavily.Options{APIKey: "tvly-key", BaseURL: base, Timeout: 300 * time.Millisecond})
		},
		ok: tavilyOK,
		check: func(r *http.Request) {
			var b strings.Builder
			fmt.Fprint(&b, r.Body)
			if r.Method != "POST" || r.URL.Path != "/search" || r.Header.Get("Authorization") != "Bearer tvly-key" || r.Header.Get("Content-Type") != "application/json" {
				panic(fmt.Sprintf("bad request %s %s %v", r.Method, r.URL, r.Header))
			}
		},
		want: knowledge.Result{Title: "BDF methods", URL: "https://example.org/bdf", Snippet: "Backward differentiation formulas for stiff problems.", Provider: "tavily"},
		bad:  []string{`{"query": "x"}`, `{"results": {}}`, `[]`},
	},
	{
		name: "arxiv",
		new: func(base string) (knowledge.Searcher, error) {
			return arxiv.New(&arxiv.Options{BaseURL: base, Timeout: 300 * time.Millisecond}), nil
		},
		ok: arxivOK,
		check: func(r *http.Request) {
			q := r.URL.Query()
			if r.URL.Path != "/api/query" || q.Get("search_query") != "all:stiff AND all:ode AND all:solver" || q.Get("max_results") != "2" {
				panic(fmt.Sprintf("bad request %s", r.URL))
			}
		},
		want: knowledge.Result{Title: "Adaptive BDF Methods for Stiff Systems", URL: "http://arxiv.org/abs/2101.00001v2",
			Snippet: "We study variable-order BDF methods.", Provider: "arxiv", Published: time.Date(2021, 1, 1, 10, 0, 0, 0, time.UTC),
			Authors: []string{"Ada Lovelace", "Alan Turing"}, DOI: "10.1000/xyz123", Venue: "J. Comput. Phys. 400 (2021)"},
		bad: []string{`{"json": "not atom"}`, `<feed xmlns="http://www.w3.org/2005/Atom"><entry><title>unclosed`},
	},
	{
		name: "crossref",
		new: func(base string) (knowledge.Searcher, error) {
			return crossref.New(&crossref.Options{BaseURL: base, Mailto: "lab@example.org", Timeout: 300 * time.Millisecond}), nil
		},
		ok: crossrefOK,
		check: func(r *http.Request) {
			q := r.URL.Query()
			if r.URL.Path != "/works" || q.Get("query") != "stiff ode solver" || q.Get("rows") != "2" || q.Get("mailto") != "lab@example.org" {
				panic(fmt.Sprintf("bad request %s", r.URL))
			}
		},
		want: knowledge.Result{Title: "Adaptive BDF Methods for Stiff Systems", URL: "https://doi.org/10.1000/xyz123",
			Snippet: "We study variable-order BDF methods.", Provider: "crossref", Published: time.Date(2021, 1, 5, 0, 0, 0, 0, time.UTC),
			Authors: []string{"Ada Lovelace", "Alan Turing"}, DOI: "10.1000/xyz123", Venue: "Journal of Computational Physics"},
		bad: []string{`{"status":"failed","message-type":"validation-failure","message":[{"type":"x","message":"bad"}]}`,
			`{"status":"ok","message-type":"work-list","message":{"total-results":0}}`, `<html></html>`},
	},
}

func TestProviders(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			var handler http.HandlerFunc
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler(w, r) }))
			defer srv.Close()
			s, err := p.new(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			req := &knowledge.SearchRequest{Query: "stiff ode solver", Limit: 2}

			handler = func(w http.ResponseWriter, r *http.Request) {
				defer func() {
					if e := recover(); e != nil {
						t.Errorf("%v", e)
						http.Error(w, "bad request", 400)
					}
				}()
				p.check(r)
				fmt.Fprint(w, p.ok)
			}
			got, err := s.Search(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("%d results, want 2: %+v", len(got), got)
			}
			if fmt.Sprintf("%+v", got[0]) != fmt.Sprintf("%+v", p.want) {
				t.Errorf("first result\n got %+v\nwant %+v", got[0], p.want)
			}
			if got[1].Title != "Rosenbrock methods" {
				t.Errorf("second result %+v", got[1])
			}

			for _, c := range []struct {
				name   string
				status int
				header map[string]string
				body   string
				want   error
				retry  time.Duration
				detail string
			}{
				{"401", 401, nil, `{"detail": {"error": "Unauthorized: missing or invalid API key."}}`, knowledge.ErrAuth, 0, "invalid API key"},
				{"429", 429, map[string]string{"Retry-After": "7"}, `{"error": {"message": "rate limit exceeded"}}`, knowledge.ErrRateLimited, 7 * time.Second, "rate limit exceeded"},
				{"429-reset", 429, map[string]string{"X-RateLimit-Reset": "3, 86400"}, `{}`, knowledge.ErrRateLimited, 3 * time.Second, ""},
				{"503", 503, nil, `upstream down`, knowledge.ErrUnavailable, 0, "upstream down"},
				{"400", 400, nil, `{"message": "query too long"}`, knowledge.ErrBadRequest, 0, "query too long"},
			} {
				handler = func(w http.ResponseWriter, r *http.Request) {
					for k, v := range c.header {
						w.Header().Set(k, v)
					}
					w.WriteHeader(c.status)
					fmt.Fprint(w, c.body)
				}
				_, err := s.Search(ctx, req)
				var pe *knowledge.ProviderError
				if !errors.Is(err, c.want) || !errors.As(err, &pe) || pe.Status != c.status || pe.RetryAfter != c.retry || !strings.Contains(err.Error(), c.detail) {
					t.Errorf("%s: got %v (%+v); want %v, retry %s, mentioning %q", c.name, err, pe, c.want, c.retry, c.detail)
				}
			}

			for _, body := range p.bad {
				handler = func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }
				if res, err := s.Search(ctx, req); !errors.Is(err, knowledge.ErrBadResponse) {
					t.Errorf("malformed body %.40q: got %+v, %v; want ErrBadResponse", body, res, err)
				}
			}

			handler = func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			}
			start := time.Now()
			_, err = s.Search(ctx, req)
			if !errors.Is(err, knowledge.ErrUnavailable) || !strings.Contains(err.Error(), "no answer within 300ms") {
				t.Errorf("timeout: %v", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("timeout took %s", d)
			}
		})
	}
}

func TestArxivErrorFeed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom">
<entry><id>http://arxiv.org/api/errors#incorrect_id_format_for_1234</id><title>Error</title>
<summary>incorrect id format for 1234</summary></entry></feed>`)
	}))
	defer srv.Close()
	_, err := arxiv.New(&arxiv.Options{BaseURL: srv.URL}).Search(context.Background(), &knowledge.SearchRequest{Query: "id:1234"})
	if !errors.Is(err, knowledge.ErrBadRequest) || !strings.Contains(err.Error(), "incorrect id format") {
		t.Errorf("got %v", err)
	}
}

func TestCrossrefDOI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.EscapedPath() != "/works/10.1038%2Fs41586-023-06792-0" && r.URL.Path != "/works/10.1038/s41586-023-06792-0" {
			http.Error(w, `{"status":"error"}`, 404)
			return
		}
		fmt.Fprint(w, `{"status":"ok","message-type":"work","message-version":"1.0.0","message":{"DOI":"10.1038/s41586-023-06792-0",
"title":["Autonomous chemical research with large language models"],"container-title":["Nature"],
"author":[{"given":"Daniil A.","family":"Boiko"}],"published":{"date-parts":[[2023,12,21]]},"URL":"https://doi.org/10.1038/s41586-023-06792-0"}}`)
	}))
	defer srv.Close()
	got, err := crossref.New(&crossref.Options{BaseURL: srv.URL}).Search(context.Background(),
		&knowledge.SearchRequest{Query: "https://doi.org/10.1038/s41586-023-06792-0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Venue != "Nature" || got[0].Authors[0] != "Daniil A. Boiko" || got[0].Published.Year() != 2023 {
		t.Errorf("got %+v", got)
	}
}

func TestNotConfigured(t *testing.T) {
	if _, err := searxng.New(&searxng.Options{}); !errors.Is(err, knowledge.ErrNotConfigured) || !strings.Contains(err.Error(), "SEARXNG_URL") {
		t.Errorf("searxng: %v", err)
	}
	if _, err := brave.New(nil); !errors.Is(err, knowledge.ErrNotConfigured) || !strings.Contains(err.Error(), "BRAVE_API_KEY") {
		t.Errorf("brave: %v", err)
	}
	if _, err := tavily.New(&tavily.Options{}); !errors.Is(err, knowledge.ErrNotConfigured) || !strings.Contains(err.Error(), "TAVILY_API_KEY") {
		t.Errorf("tavily: %v", err)
	}
}
