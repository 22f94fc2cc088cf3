package llm_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/labmate/labmate/llm"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{"milliseconds win", http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"250"}}, 250 * time.Millisecond},
		{"HTTP date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"date in the past", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0},
	} {
		if got := llm.RetryAfter(tc.h, now); got != tc.want {
			t.Errorf("%s: RetryAfter = %v; want %v", tc.name, got, tc.want)
		}
	}
}

func TestHTTPError(t *testing.T) {
	for status, want := range map[int]error{
		400: llm.ErrBadRequest, 401: llm.ErrAuth, 403: llm.ErrAuth, 404: llm.ErrBadRequest, 408: llm.ErrUnavailable,
		409: llm.ErrUnavailable, 413: llm.ErrBadRequest, 422: llm.ErrBadRequest, 429: llm.ErrRateLimited,
		500: llm.ErrUnavailable, 502: llm.ErrUnavailable, 503: llm.ErrUnavailable, 529: llm.ErrUnavailable,
	} {
		err := llm.HTTPError("p", status, nil, "m")
		if !errors.Is(err, want) {
			t.Errorf("HTTP %d: %v; want %v", status, err, want)
		}
		if retry := llm.Retryable(err); retry != (want == llm.ErrRateLimited || want == llm.ErrUnavailable) {
			t.Errorf("HTTP %d: Retryable = %v", status, retry)
		}
	}
	if got := llm.HTTPError("anthropic", 429, nil, "slow down").Error(); got != "llm: rate limited: anthropic (HTTP 429): slow down" {
		t.Errorf("Error() = %q", got)
	}
}
