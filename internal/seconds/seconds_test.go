package seconds

import (
	"math"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		s    *float64
		ns   *int64
		want time.Duration
	}{
		{f(1.5), nil, 1500 * time.Millisecond},
		{f(1.5), n(7), 1500 * time.Millisecond}, // the seconds win
		{nil, n(2500000000), 2500 * time.Millisecond},
		{f(1e-9), nil, time.Nanosecond},
		{f(math.NaN()), n(3), 3},
		{nil, nil, 0},
	} {
		if got := Duration(c.s, c.ns); got != c.want {
			t.Errorf("Duration(%v, %v) = %v, want %v", c.s, c.ns, got, c.want)
		}
	}
	if Of(90*time.Second) != 90 || Ptr(0) != nil || *Ptr(time.Second) != 1 {
		t.Error("Of or Ptr")
	}
}
