// Package fetch turns a URL into a bounded, cleaned document: HTML into its readable text, PDF
// into text, plain text as it is. Every fetch has a size limit, a time limit and a redirect
// limit, and what cannot be read is a clear error, never a half-read page.
package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/html/charset"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/extract"
)

// Options configure a Fetcher. nil means defaults.
type Options struct {
	Client       *http.Client  // its Transport is used; redirects and timeouts are the Fetcher's
	MaxBytes     int64         // the largest body read, 10 MiB when zero
	MaxText      int           // the longest text returned (longer is truncated), 100 000 bytes when zero
	Timeout      time.Duration // the whole fetch, 20 s when zero
	MaxRedirects int           // 5 when zero
	UserAgent    string
	// AllowPrivate lets the fetcher connect to every address, the special-purpose ranges of
	// CheckAddr (loopback, private, link-local, carrier-grade NAT…) included. Off by default: a
	// page (or a prompt injection) must not steer the agent into the local network or a cloud
	// metadata service. Ignored when Client is set.
	AllowPrivate bool
	// Allow lists special-purpose ranges that may be fetched from all the same, e.g. a lab's
	// documentation server at 10.1.2.3/32. Ignored when Client is set.
	Allow []netip.Prefix
}

// ReadableLimit is the largest HTML page whose main content is extracted with readability.
const ReadableLimit = 1 << 20

// Fetcher fetches pages. It is safe for concurrent use.
type Fetcher struct {
	client   *http.Client
	maxBytes int64
	maxText  int
	timeout  time.Duration
	ua       string
}

var _ knowledge.Fetcher = (*Fetcher)(nil)

// New returns a Fetcher.
func New(opts *Options) *Fetcher {
	if opts == nil {
		opts = &Options{}
	}
	f := &Fetcher{maxBytes: opts.MaxBytes, maxText: opts.MaxText, timeout: opts.Timeout, ua: opts.UserAgent}
	if f.maxBytes == 0 {
		f.maxBytes = 10 << 20
	}
	if f.maxText == 0 {
		f.maxText = 100_000
	}
	if f.timeout == 0 {
		f.timeout = 20 * time.Second
	}
	if f.ua == "" {
		f.ua = "labmate-fetch/1 (+https://github.com/labmate/labmate)"
	}
	maxRedirects := opts.MaxRedirects
	if maxRedirects == 0 {
		maxRedirects = 5
	}
	var transport http.RoundTripper
	if opts.Client != nil {
		transport = opts.Client.Transport
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		dialer := &net.Dialer{Timeout: 10 * time.Second}
		if !opts.AllowPrivate {
			// The check runs on each resolved address as it is dialled, for the first request
			// and every redirect: a public name that resolves to a private address (DNS
			// rebinding) is refused too.
			dialer.Control = func(_, address string, _ syscall.RawConn) error { return checkDial(address, opts.Allow) }
		}
		t.DialContext = dialer.DialContext
		t.Proxy = nil // the address checked must be the address connected to
		transport = t
	}
	f.client = &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			for _, v := range via {
				if v.URL.String() == req.URL.String() {
					return fmt.Errorf("%w: a redirect loop back to %s after %d redirects", knowledge.ErrRedirects, req.URL, len(via))
				}
			}
			if len(via) > maxRedirects {
				return fmt.Errorf("%w: more than %d redirects (last to %s)", knowledge.ErrRedirects, maxRedirects, req.URL)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("%w: a redirect to a %s: URL", knowledge.ErrUnsupported, req.URL.Scheme)
			}
			return nil
		},
	}
	return f
}

// Fetch gets rawURL and returns its cleaned text.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*knowledge.Page, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("fetch: %w: %q is not an http(s) URL", knowledge.ErrBadRequest, rawURL)
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w: %w", knowledge.ErrBadRequest, err)
	}
	req.Header.Set("User-Agent", f.ua)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,*/*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, f.transportError(ctx, rawURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		sentinel := knowledge.ErrBadRequest
		switch {
		case resp.StatusCode == 401 || resp.StatusCode == 403:
			sentinel = knowledge.ErrAuth
		case resp.StatusCode == 429:
			sentinel = knowledge.ErrRateLimited
		case resp.StatusCode >= 500:
			sentinel = knowledge.ErrUnavailable
		}
		return nil, fmt.Errorf("fetch %s: %w: HTTP %d", rawURL, sentinel, resp.StatusCode)
	}
	if resp.ContentLength > f.maxBytes {
		return nil, fmt.Errorf("fetch %s: %w: the page is %d bytes, over the %d-byte limit", rawURL, knowledge.ErrTooLarge, resp.ContentLength, f.maxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return nil, f.transportError(ctx, rawURL, err)
	}
	if int64(len(body)) > f.maxBytes {
		return nil, fmt.Errorf("fetch %s: %w: the page is over the %d-byte limit", rawURL, knowledge.ErrTooLarge, f.maxBytes)
	}
	final := resp.Request.URL
	page := &knowledge.Page{URL: final.String()}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "" || ct == "application/octet-stream" {
		ct, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	page.ContentType = ct
	if strings.HasPrefix(ct, "text/") || ct == "application/xhtml+xml" {
		// Pages in another charset (declared in the header or a <meta>) become UTF-8.
		if e, name, _ := charset.DetermineEncoding(body, resp.Header.Get("Content-Type")); name != "utf-8" && bytes.IndexByte(body[:min(len(body), 8192)], 0) < 0 {
			if utf8Body, err := e.NewDecoder().Bytes(body); err == nil {
				body = utf8Body
			}
		}
	}
	switch {
	case ct == "text/html" || ct == "application/xhtml+xml":
		// Readability's scoring grows faster than linearly with the page; beyond ReadableLimit the
		// whole page is rendered (scripts, styles, navigation and forms still dropped).
		title, text, err := extract.HTML(bytes.NewReader(body), final, len(body) <= ReadableLimit)
		if err != nil {
			return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
		}
		page.Title, page.Text = title, text
	case ct == "application/pdf":
		text, err := extract.PDF(ctx, body)
		if err != nil {
			return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
		}
		page.Text = text
	case strings.HasPrefix(ct, "text/") || ct == "application/json" || strings.HasSuffix(ct, "+xml") || ct == "application/xml":
		if err := extract.IsText(body); err != nil {
			return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
		}
		page.Text = string(body)
	default:
		return nil, fmt.Errorf("fetch %s: %w: content type %s", rawURL, knowledge.ErrUnsupported, ct)
	}
	if len(page.Text) > f.maxText {
		cut := f.maxText
		for cut > 0 && !isRuneStart(page.Text[cut]) {
			cut--
		}
		page.Text, page.Truncated = page.Text[:cut], true
	}
	return page, nil
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func (f *Fetcher) transportError(ctx context.Context, rawURL string, err error) error {
	var ne net.Error
	var refused *dialRefused
	switch {
	case errors.As(err, &refused): // said without the HTTP client's and the dialer's wrapping
		return fmt.Errorf("fetch %s: %w", rawURL, refused)
	case errors.Is(err, knowledge.ErrRedirects), errors.Is(err, knowledge.ErrUnsupported), errors.Is(err, ErrPrivate):
		return fmt.Errorf("fetch %s: %w", rawURL, err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("fetch %s: %w: no complete answer within %s", rawURL, knowledge.ErrUnavailable, f.timeout)
	}
	return fmt.Errorf("fetch %s: %w: %w", rawURL, knowledge.ErrUnavailable, err)
}

// ErrPrivate is the refusal to connect to a private address.
var ErrPrivate = errors.New("refusing a private address")

// checkDial refuses a dial to an address in a special-purpose range that allow does not list.
func checkDial(address string, allow []netip.Prefix) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	ip := ap.Addr()
	for _, p := range allow {
		if p.Contains(ip.WithZone("").Unmap()) {
			return nil
		}
	}
	if err := CheckAddr(ip); err != nil {
		return &dialRefused{err}
	}
	return nil
}

// dialRefused is checkDial's refusal; it wraps knowledge.ErrBadRequest and ErrPrivate.
type dialRefused struct{ err error }

func (e *dialRefused) Error() string {
	return e.err.Error() + " (LABMATE_FETCH_ALLOW=CIDR allows a range, LABMATE_FETCH_PRIVATE=1 all of them)"
}
func (e *dialRefused) Unwrap() []error { return []error{knowledge.ErrBadRequest, e.err} }
