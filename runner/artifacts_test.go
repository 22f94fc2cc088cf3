package runner_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

// TestCopyReported: the newest report of a path with a digest is the one written, from the
// store; a path not reported, one reported without a digest, one the store never kept and one
// evicted are errors naming the path, the reporter and why.
func TestCopyReported(t *testing.T) {
	store, err := artifact.Open(t.TempDir(), &artifact.Options{MaxBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	put := func(s string) *protocol.Artifact {
		sum, size, err := store.Put(strings.NewReader(s), 64)
		if err != nil {
			t.Fatal(err)
		}
		return &protocol.Artifact{Path: "t.csv", MIMEType: "text/csv", Size: size, SHA256: sum}
	}
	old, now := put("t,E\n0,1\n"), put("t,E\n0,2\n")
	big := &protocol.Artifact{Path: "big.dat", MIMEType: "text/plain", Size: 1 << 30}
	never := &protocol.Artifact{Path: "gone.png", MIMEType: "image/png", Size: 3, SHA256: strings.Repeat("ab", 32)}
	reports := []*protocol.Artifact{old, big, now, never, {Path: "t.csv", MIMEType: "text/csv", Size: 99}}

	var out bytes.Buffer
	if err := runner.CopyReported(&out, store, slices.Values(reports), "session s", "t.csv"); err != nil || out.String() != "t,E\n0,2\n" {
		t.Errorf("t.csv: %q, %v; want the newest copy kept", out.String(), err)
	}
	for _, c := range []struct {
		rel     string
		reports []*protocol.Artifact
		want    []string
	}{
		{"t.cvs", reports, []string{"t.cvs: session s reported no such artifact; it reported t.csv, big.dat, gone.png"}},
		{"t.csv", nil, []string{"t.csv: session s reported no artifacts"}},
		{"big.dat", reports, []string{"big.dat of session s was reported without a digest"}},
		{"gone.png", reports, []string{"gone.png of session s (3 bytes, sha256 abab", "not in the artifact store " + store.Dir()}},
		{"../x", reports, []string{`"../x"`}},
	} {
		out.Reset()
		err := runner.CopyReported(&out, store, slices.Values(c.reports), "session s", c.rel)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) || out.Len() > 0 {
				t.Errorf("%s: %v (%d bytes written); want %q", c.rel, err, out.Len(), w)
			}
		}
	}
	// Past its 64 bytes the store evicts the oldest: reading it says so.
	put(strings.Repeat("x", 60))
	out.Reset()
	err = runner.CopyReported(&out, store, slices.Values([]*protocol.Artifact{old}), "run r", "t.csv")
	if ev := (*artifact.EvictedError)(nil); !errors.As(err, &ev) || !strings.Contains(err.Error(), "t.csv of run r: ") {
		t.Errorf("an evicted file: %v", err)
	}
}
