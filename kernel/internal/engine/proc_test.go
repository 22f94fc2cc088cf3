package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/protocol"
)

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		``:               ``,
		`plain`:          `plain`,
		`a\nb`:           "a\nb",
		`tab\there`:      "tab\there",
		`back\\slash\\n`: `back\slash\n`,
		`trailing\`:      `trailing\`,
	} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseSideSample(t *testing.T) {
	half := 0.5
	for _, c := range []struct {
		name, t, values string
		want            *protocol.Sample
		bad             bool
	}{
		{"x", "", "1.5", &protocol.Sample{Name: "x", Value: 1.5, Source: protocol.FromHelper}, false},
		{"v", "0.5", "1 2 3 ", &protocol.Sample{Name: "v", Value: 1, Values: []float64{1, 2, 3}, T: &half, Source: protocol.FromHelper}, false},
		{"x", "", "", nil, true},
		{"x", "soon", "1", nil, true},
		{"x", "", "1 two", nil, true},
	} {
		got, err := parseSideSample(c.name, c.t, c.values)
		if c.bad != (err != nil) {
			t.Errorf("%q %q %q: err %v", c.name, c.t, c.values, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%q %q %q (-want +got):\n%s", c.name, c.t, c.values, d)
		}
	}
}
