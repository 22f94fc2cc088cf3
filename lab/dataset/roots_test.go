package dataset_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labmate/labmate/lab/dataset"
)

// secret is content that must never appear in the error of a redacted read.
const secret = "s3cr3t"

// With Redact, no error quotes the file: not a value, not the header, not a group.
func TestRedactedErrors(t *testing.T) {
	o := func() *dataset.Options {
		return &dataset.Options{Objective: "yield", Vars: []string{"lig", "base"}, Groups: []string{"sub"}, Redact: true}
	}
	for _, c := range []struct {
		name, csv string
		opts      *dataset.Options
		want      string
	}{
		{"the header", "sub,lig,yield," + secret + "\nA,L1,1,x\n", o(), `no variable column "base" in the header (it has 4 columns)`},
		{"a value", "sub,lig,base,yield\nA,L1,B1," + secret + "\n", o(), `bad.csv:2, column "yield": the objective is not a finite number`},
		{"NaN", "sub,lig,base,yield\nA,L1,B1,NaN\n", o(), `bad.csv:2, column "yield": the objective is not a finite number`},
		{"Inf", "sub,lig,base,yield\nA,L1,B1,-Inf\n", o(), `bad.csv:2, column "yield": the objective is not a finite number`},
		{"a duplicate", "sub,lig,base,yield\n" + secret + "," + secret + "1,B1,1\n" + secret + "," + secret + "1,B1,2\n", o(), `bad.csv:3, column "lig,base": duplicate conditions: same as line 2`},
		{"a bad quote", "sub,lig,base,yield\nA,L\"" + secret + ",B1,1\n", o(), `bad.csv:2, column "#4": bare " in non-quoted-field`},
		{"a short row", "sub,lig,base,yield\nA," + secret + ",1\n", o(), `bad.csv:2, column "#1": wrong number of fields`},
		{"a long line", "sub,lig,base,yield\nA," + strings.Repeat(secret, 20000) + ",B1,1\n", o(), `bad.csv:2: the line has`},
		{"too many levels", levelsWith(secret, 1001), &dataset.Options{Objective: "yield", Vars: []string{"lig"}, Redact: true}, `bad.csv:1002, column "lig": 1001 levels`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := dataset.Read(strings.NewReader(c.csv), "bad.csv", c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error quotes the file: %v", err)
			}
			// Without Redact the owner of the file is shown what is wrong.
			o := *c.opts
			o.Redact = false
			if _, err := dataset.Read(strings.NewReader(c.csv), "bad.csv", &o); c.name == "the header" && !strings.Contains(err.Error(), secret) {
				t.Errorf("unredacted: %v, want the columns", err)
			}
		})
	}
	tb, err := dataset.Read(strings.NewReader("sub,lig,yield\n"+secret+",L1,1\n"), "ok.csv", &dataset.Options{Objective: "yield", Vars: []string{"lig"}, Groups: []string{"sub"}, Redact: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Group("nope"); err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), `no group "nope" (it has 1 groups)`) {
		t.Errorf("unknown group: %v", err)
	}
}

func levelsWith(prefix string, n int) string {
	var b strings.Builder
	b.WriteString("lig,yield\n")
	for i := range n {
		b.WriteString(prefix)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(strings.Repeat("y", i/26))
		b.WriteString(",1\n")
	}
	return b.String()
}

// A path is read only under a data root, every link resolved; outside (or through a link that
// leads outside, dangling or not) the refusal is the same and names the path only.
func TestRoots(t *testing.T) {
	tmp := t.TempDir()
	data, other, outside := filepath.Join(tmp, "data"), filepath.Join(tmp, "other"), filepath.Join(tmp, "outside")
	for _, d := range []string{data, other, outside, filepath.Join(data, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(data, "small.csv"), small)
	write(filepath.Join(data, "sub", "bad.csv"), "sub,lig,base,yield\nA,L1,B1,"+secret+"\n")
	write(filepath.Join(other, "o.csv"), small)
	write(filepath.Join(outside, "x.csv"), "sub,lig,base,yield\n"+secret+",L1,B1,1\n")
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(data, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("/etc/passwd", "passwd")                            // absolute, outside
	link("../outside/x.csv", "rel.csv")                      // relative, outside
	link("/etc/no-such-file", "dangling")                    // outside, dangling
	link("../outside", "outdir")                             // a directory outside
	link(filepath.Join(data, "small.csv"), "abs-inside.csv") // absolute, inside
	link("sub/../small.csv", "rel-inside.csv")               // relative, inside
	link(filepath.Join(other, "o.csv"), "other.csv")         // into another root
	if err := syscall.Mkfifo(filepath.Join(data, "fifo.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A root given through a link is matched as given and as resolved.
	viaLink := filepath.Join(tmp, "data-link")
	if err := os.Symlink(data, viaLink); err != nil {
		t.Fatal(err)
	}
	roots, err := dataset.NewRoots([]string{viaLink, other})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want string // "" for read
	}{
		{filepath.Join(data, "small.csv"), ""},
		{filepath.Join(viaLink, "small.csv"), ""},
		{"small.csv", ""},
		{"o.csv", ""}, // relative: tried under each root in turn
		{filepath.Join(data, "abs-inside.csv"), ""},
		{filepath.Join(data, "rel-inside.csv"), ""},
		{filepath.Join(data, "other.csv"), ""},
		{"/etc/passwd", `dataset: not under a data root: "/etc/passwd"`},
		{filepath.Join(data, "..", "outside", "x.csv"), "not under a data root"},
		{"../outside/x.csv", "not under a data root"},
		{"sub/../../outside/x.csv", "not under a data root"},
		{filepath.Join(data, "passwd"), "not under a data root"},
		{filepath.Join(data, "rel.csv"), "not under a data root"},
		{filepath.Join(data, "dangling"), "not under a data root"},
		{filepath.Join(data, "outdir", "x.csv"), "not under a data root"},
		{"", "not under a data root"},
		{filepath.Join(data, "nope.csv"), "no such file under the data roots"},
		{filepath.Join(data, "sub"), "is not a regular file"},
		{filepath.Join(data, "fifo.csv"), "is not a regular file"},
		{filepath.Join(data, "sub", "bad.csv"), `bad.csv:2, column "yield": the objective is not a finite number`},
	} {
		t0 := time.Now()
		tb, err := roots.Open(c.path, smallOpts)
		switch {
		case c.want == "" && (err != nil || len(tb.Groups) != 2):
			t.Errorf("%s: %v", c.path, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		case c.want != "" && strings.Contains(err.Error(), secret):
			t.Errorf("%s: the error quotes the file: %v", c.path, err)
		case strings.Contains(c.want, "not under") && !errors.Is(err, dataset.ErrNotUnderRoot):
			t.Errorf("%s: %v is not ErrNotUnderRoot", c.path, err)
		}
		if time.Since(t0) > 5*time.Second {
			t.Errorf("%s: took %v", c.path, time.Since(t0))
		}
	}
	// A file over the byte limit is refused before it is read.
	write(filepath.Join(data, "big.csv"), small+strings.Repeat("#", 2000))
	if _, err := roots.Open("big.csv", &dataset.Options{Objective: "yield", Vars: []string{"lig"}, Limits: &dataset.Limits{Bytes: 1000}}); err == nil ||
		!strings.Contains(err.Error(), "big.csv: 2094 bytes; at most 1000 are allowed") {
		t.Errorf("big: %v", err)
	}
	// No roots: every path is refused.
	none, err := dataset.NewRoots(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.Open(filepath.Join(data, "small.csv"), smallOpts); !errors.Is(err, dataset.ErrNotUnderRoot) {
		t.Errorf("no roots: %v", err)
	}
	if _, err := dataset.NewRoots([]string{filepath.Join(tmp, "missing")}); err == nil {
		t.Error("a missing root was accepted")
	}
	if _, err := dataset.NewRoots([]string{filepath.Join(data, "small.csv")}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as a root: %v", err)
	}
}
