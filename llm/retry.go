package llm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"time"
)

// RetryOptions tune WithRetry. Zero fields take the defaults.
type RetryOptions struct {
	// MaxAttempts is the number of calls, the first included. Default 4.
	MaxAttempts int
	// BaseDelay is the wait before the first retry; it doubles for each further one, with
	// jitter (a random wait between half and all of it). Default 1s.
	BaseDelay time.Duration
	// MaxDelay caps the backoff. Default 30s.
	MaxDelay time.Duration
	// MaxRetryAfter caps a wait the provider asks for with Retry-After. Default 60s.
	MaxRetryAfter time.Duration
	// Timeout limits each attempt, from the request to the end of the streamed answer; an
	// attempt that runs out is ErrUnavailable and is retried. Default 10 minutes; negative means
	// no limit.
	Timeout time.Duration
}

func (o *RetryOptions) withDefaults() RetryOptions {
	var v RetryOptions
	if o != nil {
		v = *o
	}
	if v.MaxAttempts <= 0 {
		v.MaxAttempts = 4
	}
	if v.BaseDelay <= 0 {
		v.BaseDelay = time.Second
	}
	if v.MaxDelay <= 0 {
		v.MaxDelay = 30 * time.Second
	}
	if v.MaxRetryAfter <= 0 {
		v.MaxRetryAfter = time.Minute
	}
	if v.Timeout == 0 {
		v.Timeout = 10 * time.Minute
	}
	return v
}

// WithRetry returns m with retries: a call that fails with a Retryable error (rate limited,
// 5xx, a refused or reset connection, an attempt timeout) is made again after a backoff with
// jitter, or after the provider's Retry-After when it gave one (capped by MaxRetryAfter), up to
// MaxAttempts calls. Other errors (bad key, bad request, an unreadable reply) return at once.
//
// A call is retried only while nothing has been yielded to the caller: once a text delta went
// out, a failure later in the same stream is returned as is, because the caller may already have
// acted on the partial answer. The caller's cancellation stops the waiting at once.
func WithRetry(m Model, opts *RetryOptions) Model {
	return &retrying{Model: m, opts: opts.withDefaults()}
}

type retrying struct {
	Model
	opts RetryOptions
}

func (r *retrying) Stream(ctx context.Context, req *Request) iter.Seq2[*Chunk, error] {
	return func(yield func(*Chunk, error) bool) {
		var last error
		for attempt := 1; ; attempt++ {
			started, err, stop := r.attempt(ctx, req, yield)
			if stop || err == nil {
				return
			}
			if started {
				yield(nil, fmt.Errorf("%w (the answer had started; not retried)", err))
				return
			}
			last = err
			if !Retryable(err) || ctx.Err() != nil {
				yield(nil, err)
				return
			}
			if attempt >= r.opts.MaxAttempts {
				yield(nil, fmt.Errorf("%w (gave up after %d attempts)", last, attempt))
				return
			}
			wait := r.backoff(attempt, err)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				yield(nil, fmt.Errorf("%w (while waiting %v to retry after: %w)", ctx.Err(), wait.Round(time.Millisecond), last))
				return
			}
		}
	}
}

// attempt runs one call. started says whether a chunk reached the caller; stop that the caller
// stopped iterating (nothing more to do).
func (r *retrying) attempt(ctx context.Context, req *Request, yield func(*Chunk, error) bool) (started bool, err error, stop bool) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if r.opts.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, r.opts.Timeout)
	}
	defer cancel()
	for c, err := range r.Model.Stream(actx, req) {
		if err != nil {
			if ctx.Err() == nil && actx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
				err = &APIError{Kind: ErrUnavailable, Provider: r.Name(), Message: fmt.Sprintf("no complete answer within %v", r.opts.Timeout)}
			}
			return started, err, false
		}
		started = true
		if !yield(c, nil) {
			return true, nil, true
		}
	}
	return started, nil, false
}

// backoff is the wait before retry number attempt (1 for the first retry).
func (r *retrying) backoff(attempt int, err error) time.Duration {
	var ae *APIError
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		return min(ae.RetryAfter, r.opts.MaxRetryAfter)
	}
	d := r.opts.BaseDelay << min(attempt-1, 30)
	if d <= 0 || d > r.opts.MaxDelay {
		d = r.opts.MaxDelay
	}
	return d/2 + rand.N(d/2+1)
}
