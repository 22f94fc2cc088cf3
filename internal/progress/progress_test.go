package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBar(t *testing.T) {
	var b bytes.Buffer
	bar := Resume(&b, "campaigns", 0, 4, -1)
	bar.Add()
	if got := b.String(); !strings.Contains(got, "campaigns [       ") || !strings.Contains(got, "1/4") || strings.Contains(got, "tokens") || !strings.Contains(got, "left") {
		t.Errorf("after one step of four: %q", got)
	}
	b.Reset()
	bar = Resume(&b, "trials", 2, 4, 12_000)
	if got := b.String(); !strings.Contains(got, "2/4") || !strings.Contains(got, "12k tokens") || strings.Contains(got, "left") {
		t.Errorf("resumed at 2 of 4, no step since: %q (no estimate yet)", got)
	}
	bar.AddTokens(500)
	bar.AddTokens(500)
	if got := b.String(); !strings.Contains(got, "4/4") || !strings.Contains(got, "13k tokens") || !strings.HasSuffix(got, "\n") {
		t.Errorf("done: %q", got)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 950: "950", 9999: "9999", 12_345: "12.3k", 4_560_000: "4.56M"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestWorking(t *testing.T) {
	var b syncBuffer
	done := working(&b, "harvesting", 20*time.Millisecond)
	time.Sleep(70 * time.Millisecond)
	done()
	done() // twice is harmless
	got := b.String()
	if !strings.HasPrefix(got, "\rharvesting… ") || strings.Count(got, "\rharvesting… ") < 3 || !strings.HasSuffix(got, "\n") {
		t.Errorf("working: %q", got)
	}
	var quiet bytes.Buffer
	Working(&quiet, "harvesting", time.Millisecond)()
	if quiet.Len() != 0 {
		t.Errorf("not a terminal, yet: %q", quiet.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the writer's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStatus(t *testing.T) {
	var b syncBuffer
	s := (&Status{w: &b, tty: true, label: "0 of 2 scans done", start: time.Now()}).run(20 * time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	s.Println("[1/2] lammps Cu: a0 3.615 Å", "1 of 2 scans done")
	time.Sleep(30 * time.Millisecond)
	s.Done()
	s.Done()
	got := b.String()
	for _, want := range []string{"\r\033[K0 of 2 scans done… 0s", "\r\033[K[1/2] lammps Cu: a0 3.615 Å\n\r\033[K1 of 2 scans done… "} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q: %q", want, got)
		}
	}
	if !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("the status line is not erased at the end: %q", got)
	}
	var plain bytes.Buffer
	q := NewStatus(&plain, "x", time.Millisecond)
	q.Println("a line", "")
	q.Done()
	if plain.String() != "a line\n" {
		t.Errorf("not a terminal: %q", plain.String())
	}
}
