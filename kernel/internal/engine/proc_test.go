package engine

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"

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

// TestReadLine: lines end at '\n' and at a bare '\r' (a progress bar's redraw), which is
// delivered as soon as it is written, without waiting for a newline.
func TestReadLine(t *testing.T) {
	pr, pw := io.Pipe()
	r := bufio.NewReaderSize(pr, 64)
	got := make(chan string, 100)
	go func() {
		for {
			b, err := readLine(r)
			if len(b) > 0 {
				got <- string(b)
			}
			if err != nil && err != bufio.ErrBufferFull {
				close(got)
				return
			}
		}
	}()
	pw.Write([]byte("a\r\nb\n\r 10%|#"))
	for _, want := range []string{"a\r\n", "b\n"} {
		if g := <-got; g != want {
			t.Fatalf("got %q, want %q", g, want)
		}
	}
	pw.Write([]byte(" | loss=0.5\r 20%|##"))
	if g := <-got; g != "\r" {
		t.Fatalf("got %q, want the bar's leading \\r", g)
	}
	select {
	case g := <-got:
		if g != " 10%|# | loss=0.5\r" {
			t.Fatalf("got %q, want the first redraw", g)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a redraw ended by \\r was not delivered before a newline")
	}
	pw.Write([]byte(" | loss=0.4\n" + strings.Repeat("x", 100) + "\n"))
	want := []string{" 20%|## | loss=0.4\n", strings.Repeat("x", 64), strings.Repeat("x", 36) + "\n"}
	for _, w := range want {
		if g := <-got; g != w {
			t.Fatalf("got %q, want %q", g, w)
		}
	}
	pw.Close()
	if g, ok := <-got; ok {
		t.Fatalf("got %q after EOF", g)
	}
}
