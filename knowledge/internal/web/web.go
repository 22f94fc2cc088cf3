// Package web is the HTTP plumbing the search providers share: one request with a time limit, a
// bounded body, and the provider's failures mapped to knowledge's sentinels (401/403 ErrAuth, 429
// ErrRateLimited with Retry-After, 5xx and timeouts ErrUnavailable, a body that does not decode
// ErrBadResponse).
package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labmate/labmate/knowledge"
)

// MaxBody is the largest response body read.
const MaxBody = 8 << 20

// Client does provider requests.
type Client struct {
	Provider string
	HTTP     *http.Client  // http.DefaultClient when nil
	Timeout  time.Duration // 15 s when zero
}

// Do sends req and returns the body of a 2xx answer, or a *knowledge.ProviderError.
func (c *Client) Do(ctx context.Context, req *http.Request) ([]byte, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	req = req.WithContext(ctx)
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "labmate/1 (+https://github.com/labmate/labmate)")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, c.transport(ctx, timeout, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return nil, c.transport(ctx, timeout, err)
	}
	if len(body) > MaxBody {
		return nil, &knowledge.ProviderError{Provider: c.Provider, Status: resp.StatusCode, Err: knowledge.ErrTooLarge,
			Detail: fmt.Sprintf("the answer is over %d bytes", MaxBody)}
	}
	if resp.StatusCode/100 == 2 {
		return body, nil
	}
	e := &knowledge.ProviderError{Provider: c.Provider, Status: resp.StatusCode, Detail: detail(body)}
	switch {
	case resp.StatusCode == 401 || resp.StatusCode == 403:
		e.Err = knowledge.ErrAuth
	case resp.StatusCode == 429:
		e.Err = knowledge.ErrRateLimited
		e.RetryAfter = RetryAfter(resp.Header, time.Now())
	case resp.StatusCode >= 500:
		e.Err = knowledge.ErrUnavailable
		e.RetryAfter = RetryAfter(resp.Header, time.Now())
	default:
		e.Err = knowledge.ErrBadRequest
	}
	return nil, e
}

func (c *Client) transport(ctx context.Context, timeout time.Duration, err error) error {
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return &knowledge.ProviderError{Provider: c.Provider, Err: knowledge.ErrUnavailable, Detail: fmt.Sprintf("no answer within %s", timeout)}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &knowledge.ProviderError{Provider: c.Provider, Err: knowledge.ErrUnavailable, Detail: err.Error()}
}

// JSON does req and decodes a 2xx JSON answer into out.
func (c *Client) JSON(ctx context.Context, req *http.Request, out any) error {
	req.Header.Set("Accept", "application/json")
	body, err := c.Do(ctx, req)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return c.Malformed(err, body)
	}
	return nil
}

// Malformed is the error for a body that is not what the provider documents.
func (c *Client) Malformed(err error, body []byte) error {
	return &knowledge.ProviderError{Provider: c.Provider, Status: 200, Err: knowledge.ErrBadResponse,
		Detail: fmt.Sprintf("%v; the body starts %q", err, head(body))}
}

// RetryAfter reads Retry-After (seconds or an HTTP date), or else X-RateLimit-Reset (seconds,
// the first of a comma-separated list, as Brave sends it); 0 when neither is there.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 {
			return time.Duration(s) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil && t.After(now) {
			return t.Sub(now).Round(time.Second)
		}
	}
	if v := strings.TrimSpace(h.Get("X-RateLimit-Reset")); v != "" {
		first, _, _ := strings.Cut(v, ",")
		if s, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && s >= 0 {
			return time.Duration(s) * time.Second
		}
	}
	return 0
}

// detail is a provider's error message: a JSON error field when there is one, else the body's start.
func detail(body []byte) string {
	var v map[string]any
	if json.Unmarshal(body, &v) == nil {
		for _, k := range []string{"detail", "error", "message", "msg"} {
			if s := find(v[k]); s != "" {
				return head([]byte(s))
			}
		}
	}
	return head(body)
}

func find(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		for _, k := range []string{"error", "message", "detail", "msg"} {
			if s := find(x[k]); s != "" {
				return s
			}
		}
	case []any:
		if len(x) > 0 {
			return find(x[0])
		}
	}
	return ""
}

func head(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// Limit is n, or def when n is not positive, capped at max.
func Limit(n, def, max int) int {
	if n <= 0 {
		n = def
	}
	return min(n, max)
}

// Parse time in one of the layouts providers use; zero when none fits.
func ParseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02", time.RFC1123, time.RFC1123Z} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}
