package main

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/arxiv"
	"github.com/labmate/labmate/knowledge/brave"
	"github.com/labmate/labmate/knowledge/crossref"
	"github.com/labmate/labmate/knowledge/fetch"
	"github.com/labmate/labmate/knowledge/searxng"
	"github.com/labmate/labmate/knowledge/sqlite"
	"github.com/labmate/labmate/knowledge/tavily"
	"github.com/labmate/labmate/knowledge/tools"
	"github.com/labmate/labmate/tool"
)

// knowledgeEnv documents the settings knowledgeFromEnv reads.
const knowledgeEnv = `Web and literature providers are configured by the environment; nothing reaches the
network unless one is:
  SEARXNG_URL       a SearxNG instance (its JSON format enabled), e.g. http://127.0.0.1:8888
  BRAVE_API_KEY     Brave Search API key (BRAVE_URL overrides the endpoint)
  TAVILY_API_KEY    Tavily API key (TAVILY_URL overrides the endpoint)
  LABMATE_PAPERS    arxiv,crossref (either or both) for papers; ARXIV_URL / CROSSREF_URL override
                    the endpoints and enable them; CROSSREF_MAILTO joins Crossref's polite pool
  LABMATE_FETCH=1   allow reading pages without a web provider (on when one is configured)
  LABMATE_FETCH_ALLOW       CIDR ranges (or addresses), comma-separated, that pages may come from
                    although they are special-purpose (loopback, private, CGNAT, …; all refused
                    by default), e.g. 10.1.2.0/24 for a lab's documentation server
  LABMATE_FETCH_PRIVATE=1   allow pages from every address`

// knowledgeFromEnv wires the web, literature and fetch providers the environment configures
// into the agent tools' configuration; the documentation index is the caller's.
func knowledgeFromEnv(index knowledge.Index) (*tools.Config, error) {
	cfg := &tools.Config{Index: index}
	if u := os.Getenv("SEARXNG_URL"); u != "" {
		s, err := searxng.New(&searxng.Options{BaseURL: u})
		if err != nil {
			return nil, err
		}
		cfg.Web = append(cfg.Web, s)
	}
	if k := os.Getenv("BRAVE_API_KEY"); k != "" {
		s, err := brave.New(&brave.Options{APIKey: k, BaseURL: os.Getenv("BRAVE_URL")})
		if err != nil {
			return nil, err
		}
		cfg.Web = append(cfg.Web, s)
	}
	if k := os.Getenv("TAVILY_API_KEY"); k != "" {
		s, err := tavily.New(&tavily.Options{APIKey: k, BaseURL: os.Getenv("TAVILY_URL")})
		if err != nil {
			return nil, err
		}
		cfg.Web = append(cfg.Web, s)
	}
	papers := map[string]bool{}
	for _, p := range strings.Split(os.Getenv("LABMATE_PAPERS"), ",") {
		switch p = strings.TrimSpace(strings.ToLower(p)); p {
		case "":
		case "arxiv", "crossref":
			papers[p] = true
		default:
			return nil, fmt.Errorf("LABMATE_PAPERS: unknown provider %q (choose arxiv, crossref)", p)
		}
	}
	if papers["arxiv"] || os.Getenv("ARXIV_URL") != "" {
		cfg.Papers = append(cfg.Papers, arxiv.New(&arxiv.Options{BaseURL: os.Getenv("ARXIV_URL")}))
	}
	if papers["crossref"] || os.Getenv("CROSSREF_URL") != "" {
		cfg.Papers = append(cfg.Papers, crossref.New(&crossref.Options{BaseURL: os.Getenv("CROSSREF_URL"), Mailto: os.Getenv("CROSSREF_MAILTO")}))
	}
	if len(cfg.Web) > 0 || len(cfg.Papers) > 0 || os.Getenv("LABMATE_FETCH") == "1" {
		allow, err := fetchAllow(os.Getenv("LABMATE_FETCH_ALLOW"))
		if err != nil {
			return nil, err
		}
		cfg.Fetcher = fetch.New(&fetch.Options{AllowPrivate: os.Getenv("LABMATE_FETCH_PRIVATE") == "1", Allow: allow})
	}
	return cfg, nil
}

// fetchAllow parses LABMATE_FETCH_ALLOW: CIDR ranges or single addresses, comma-separated.
func fetchAllow(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("LABMATE_FETCH_ALLOW: %q is neither a CIDR range (10.1.2.0/24) nor an address", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// agentKnowledgeTools are the knowledge tools for labmate run: the documentation index when one
// has been built (labmate docs index; it is not created empty here), and the providers the
// environment configures. close releases the index.
func agentKnowledgeTools() (ts []tool.Tool, close func() error, err error) {
	close = func() error { return nil }
	path, err := docsPath("")
	if err != nil {
		return nil, close, err
	}
	var index knowledge.Index
	if _, statErr := os.Stat(path); statErr == nil {
		ix, err := sqlite.Open(path, nil)
		switch {
		case errors.Is(err, sqlite.ErrOldIndex): // the run goes on without it
			fmt.Fprintf(os.Stderr, "labmate: the documentation index is not searched: %v\n", err)
		case err != nil:
			return nil, close, err
		default:
			index, close = ix, ix.Close
		}
	}
	cfg, err := knowledgeFromEnv(index)
	if err != nil {
		close()
		return nil, func() error { return nil }, err
	}
	return tools.New(cfg), close, nil
}
