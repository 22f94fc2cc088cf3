package server

import (
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"
)

// The guard is the chain of middleware every request goes through before the routes, in
// this order: the Host allow-list (against DNS rebinding), the Origin check on requests that
// change state (against cross-site requests), application/json on every such request with
// a body (a cross-site page cannot send it without a CORS preflight, which the server never
// grants), and the bearer token. Each refuses with a JSON error that says what was wrong and
// how to fix it. (Trickling clients are cut off by the http.Server of HTTPServer.)
func (s *Server) guardChain(h http.Handler) http.Handler {
	h = s.requireToken(h)
	h = explainTimeout(s.cfg.BodyTimeout)(h)
	h = requireJSON(h)
	h = sameOrigin(h)
	return s.hosts.middleware(h)
}

// hostPolicy is the Host allow-list. A DNS-rebinding page reaches the server under its own
// name (Host: evil.example:7878), which no name here matches; an IP literal cannot be
// rebound, so IP hosts are allowed where the server listens on them.
type hostPolicy struct {
	names    map[string]bool // lower-case names and canonical IP literals
	suffixes []string        // ".example.org" from "*.example.org"
	anyIP    bool            // the server listens on every interface: any IP literal
	help     string          // what is allowed, for the refusal
}

// newHostPolicy allows the loopback names (localhost, *.localhost, 127.0.0.0/8, ::1), the
// host of addr (an unspecified one, 0.0.0.0 or [::], allows every IP literal) and each of
// allow (a name, an IP, or *.domain for its subdomains). Ports are not compared.
func newHostPolicy(addr string, allow []string) (*hostPolicy, error) {
	p := &hostPolicy{names: map[string]bool{}}
	shown := []string{"localhost", "*.localhost", "127.0.0.1", "[::1]"}
	if addr != "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("server: Config.Addr %q: %w", addr, err)
		}
		ip, err := netip.ParseAddr(host)
		if host == "" || (err == nil && ip.IsUnspecified()) {
			p.anyIP = true
			shown = append(shown, "any IP address")
		} else if host != "" && !LoopbackHost(host) {
			p.names[canonicalHost(host)] = true
			shown = append(shown, host)
		}
	}
	for _, a := range allow {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		name, wild := strings.CutPrefix(a, "*.")
		_, ipErr := netip.ParseAddr(strings.Trim(name, "[]"))
		switch {
		case name == "" || strings.ContainsAny(name, "/@ *?#") || (strings.Contains(name, ":") && ipErr != nil):
			return nil, fmt.Errorf("server: allowed host %q: want a host name, an IP address or *.domain (no scheme, port or path)", a)
		case wild:
			p.suffixes = append(p.suffixes, "."+canonicalHost(name))
		default:
			p.names[canonicalHost(name)] = true
		}
		shown = append(shown, a)
	}
	p.help = strings.Join(shown, ", ")
	return p, nil
}

// canonicalHost lower-cases a host, drops IPv6 brackets and a trailing dot, and writes IP
// literals in their canonical form.
func canonicalHost(host string) string {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap().String()
	}
	return host
}

// LoopbackHost reports whether host (a URL's or a Host header's, without port) always means
// this machine.
func LoopbackHost(host string) bool {
	host = canonicalHost(host)
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.IsLoopback()
	}
	// RFC 6761: browsers resolve localhost and its subdomains to loopback without DNS.
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// allows reports whether the server answers to hostport (a Host header).
func (p *hostPolicy) allows(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	switch host {
	case "":
		return false
	case "127.0.0.1", "localhost", "::1": // the usual ones, without normalising
		return true
	}
	if LoopbackHost(host) {
		return true
	}
	host = canonicalHost(host)
	if p.names[host] {
		return true
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return p.anyIP
	}
	for _, suf := range p.suffixes {
		if strings.HasSuffix(host, suf) {
			return true
		}
	}
	return false
}

// securityHeaders go on every answer: no sniffing, no Referer (the dashboard's URL may
// carry ?token=), no framing (against clickjacking the cell runner).
var securityHeaders = http.Header{
	"X-Content-Type-Options":  {"nosniff"},
	"Referrer-Policy":         {"no-referrer"},
	"X-Frame-Options":         {"DENY"},
	"Content-Security-Policy": {"frame-ancestors 'none'"},
}

func (p *hostPolicy) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for k, v := range securityHeaders {
			h[k] = v // canonical keys; each value's slice is full, so an Add copies it
		}
		if !p.allows(r.Host) {
			httpError(w, http.StatusForbidden, fmt.Sprintf("Host %q is not a name this server answers to (a DNS-rebinding page would look like this): "+
				"it answers to %s; start labmate serve with --allow-host NAME to add a name", r.Host, p.help))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// changesState reports whether a request may change state: any method but GET, HEAD and
// OPTIONS, and the WebSocket upgrade (whose messages run code).
func changesState(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return isUpgrade(r)
	}
	return true
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// sameOrigin refuses a request that changes state when a browser says it comes from another
// origin: Sec-Fetch-Site other than same-origin or none (typed by the user), or an Origin
// whose host:port is not the request's Host. Clients that are not browsers send neither.
func sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if changesState(r) {
			if err := checkOrigin(r); err != nil {
				httpError(w, http.StatusForbidden, err.Error())
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func checkOrigin(r *http.Request) error {
	what := r.Method + " " + r.URL.Path
	if isUpgrade(r) {
		what = "WebSocket " + r.URL.Path
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return fmt.Errorf("%s: refused a request from another site (Sec-Fetch-Site: %s): only pages this server serves may change its state", what, site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	if rest, ok := strings.CutPrefix(origin, "http://"); ok && rest == r.Host {
		return nil // the usual same-origin case, without parsing
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: refused a request from origin %q: only pages this server serves may change its state", what, origin)
	}
	if !strings.EqualFold(u.Host, r.Host) {
		return fmt.Errorf("%s: refused a request from origin %s, which is not this server (%s): only pages this server serves may change its state", what, origin, r.Host)
	}
	return nil
}

// requireJSON answers 415 to a request that changes state and has a body that is not
// application/json: HTML forms and fetch(…, {mode: "no-cors"}) can only send text/plain,
// form-urlencoded or multipart bodies across sites.
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); r.ContentLength != 0 && !isUpgrade(r) && changesState(r) && ct != "application/json" {
			if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
				httpError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("%s %s: Content-Type %q: a request body must be application/json", r.Method, r.URL.Path, ct))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// explainTimeout makes the error of a request body cut off by http.Server.ReadTimeout (a
// client trickling it) say so, for the answer the handler gives.
func explainTimeout(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
				r.Body = &timeoutBody{ReadCloser: r.Body, limit: d}
			}
			next.ServeHTTP(w, r)
		})
	}
}

type timeoutBody struct {
	io.ReadCloser
	limit time.Duration
}

func (b *timeoutBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("the request did not arrive within %v: %w", b.limit, err)
	}
	return n, err
}

// wsProtocol is the WebSocket subprotocol the dashboard asks for; it offers its token as a
// second one, wsTokenPrefix + base64url(token), since a browser's WebSocket cannot send
// headers (and a token in the URL would end up in logs).
const (
	wsProtocol    = "labmate"
	wsTokenPrefix = "labmate.bearer."
)

// requireToken answers 401 to a request without the bearer token, but for the public
// routes (health, the dashboard's page and assets).
func (s *Server) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Token != "" && !public(r) && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="labmate"`)
			httpError(w, http.StatusUnauthorized, "missing or wrong bearer token: send Authorization: Bearer TOKEN "+
				"(labmate serve prints it and stores it in DATA/token; the dashboard takes it from the URL it prints)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) authorized(r *http.Request) bool {
	if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) == 1
	}
	if !isUpgrade(r) {
		return false
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			enc, ok := strings.CutPrefix(strings.TrimSpace(p), wsTokenPrefix)
			if !ok {
				continue
			}
			got, err := base64.RawURLEncoding.DecodeString(enc)
			return err == nil && subtle.ConstantTimeCompare(got, []byte(s.cfg.Token)) == 1
		}
	}
	return false
}
