package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// HTTPError is the APIError for a provider's HTTP error answer: the status picks the sentinel
// (401/403 ErrAuth, 429 ErrRateLimited, 408/409/5xx ErrUnavailable, other 4xx ErrBadRequest) and
// the Retry-After-Ms or Retry-After header, when present, sets RetryAfter. Adapters share it so
// every provider's errors mean the same thing.
func HTTPError(provider string, status int, h http.Header, msg string) *APIError {
	kind := ErrBadRequest
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		kind = ErrAuth
	case status == http.StatusTooManyRequests:
		kind = ErrRateLimited
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		kind = ErrUnavailable
	case status < 400:
		kind = ErrProvider
	}
	return &APIError{Kind: kind, Provider: provider, Status: status, RetryAfter: RetryAfter(h, time.Now()), Message: msg}
}

// RetryAfter reads how long a provider asks to wait: Retry-After-Ms (milliseconds, OpenAI), or
// Retry-After in seconds or as an HTTP date. It is 0 when absent or unreadable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// TransportError classifies an error that is not an HTTP answer: the caller's own cancellation
// passes through unchanged (wrapped), a refused, reset or cut connection is ErrUnavailable, and
// anything else (typically a body the adapter cannot read) is ErrProvider.
func TransportError(ctx context.Context, provider string, err error) error {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return fmt.Errorf("%s: %w", provider, err)
	}
	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.As(err, &op), errors.As(err, &dns),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, context.DeadlineExceeded):
		return &APIError{Kind: ErrUnavailable, Provider: provider, Message: err.Error()}
	}
	return &APIError{Kind: ErrProvider, Provider: provider, Message: err.Error()}
}
