package harvest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/internal/testutil"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/knowledge/harvest"
)

func TestTexinfo(t *testing.T) {
	sigs, body := harvest.Texinfo(` -*- texinfo -*-
 @deftypefn  {} {[@var{x}, @var{r}] =} lsq (@var{A}, @var{b})
 @deftypefnx {} {@var{x} =} lsq (@dots{})
 Solve @code{@var{A}*x = @var{b}} in the least-squares sense, see @ref{XREFmldivide,,mldivide}.

 @tex
 $\min \|Ax - b\|$
 @end tex
 @example
 x = lsq (A, b) @result{} 3
 @end example
 @seealso{mldivide, pinv}
 @end deftypefn`)
	if strings.Join(sigs, "|") != "[x, r] = lsq (A, b)|x = lsq (...)" {
		t.Errorf("signatures %q", sigs)
	}
	want := "-*- texinfo -*-\nSolve A*x = b in the least-squares sense, see mldivide.\n\nx = lsq (A, b) => 3\nSee also: mldivide, pinv."
	if body != want {
		t.Errorf("body:\n%s\nwant:\n%s", body, want)
	}
}

// hostileDir is a directory with files a cell could have planted, as the current directory
// and HOME of a harvest: each would create PWNED in it if anything ran it.
func hostileDir(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, code := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(code, "PWNED", filepath.Join(dir, "PWNED"))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("HOME", dir)
	return dir
}

func notPwned(t *testing.T, dir string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, "PWNED")); err == nil {
		t.Errorf("a planted file ran on the host during the harvest: PWNED says %q", b)
	}
}

func TestOctave(t *testing.T) {
	// pkg.m shadows Octave's pkg, which the harvest calls first; .octaverc runs at start-up
	// unless --norc; a package installed in HOME is loaded by "pkg load all".
	plant := `fid = fopen("PWNED", "w"); fputs(fid, "ran"); fclose(fid);`
	dir := hostileDir(t, map[string]string{
		"pkg.m":     "function varargout = pkg(varargin)\n" + plant + "\nend\n",
		"unique.m":  "function varargout = unique(varargin)\n" + plant + "\nend\n",
		".octaverc": plant,
		"startup.m": plant,
	})
	docs, err := harvest.Octave(context.Background(), &harvest.OctaveOptions{Sandbox: sandboxed(t)})
	if err != nil {
		t.Fatal(err)
	}
	notPwned(t, dir)
	by := map[string]*knowledge.Doc{}
	for _, d := range docs {
		by[d.Title] = d
	}
	if len(docs) < 1000 {
		t.Errorf("%d functions; an Octave install documents well over 1000", len(docs))
	}
	ode := by["ode15s"]
	if ode == nil || ode.Heading != "ode" || ode.Source != "octave:ode15s" ||
		!strings.HasPrefix(ode.Summary, "Solve a set of stiff Ordinary Differential Equations") || strings.Contains(ode.Text, "@var") {
		t.Errorf("ode15s: %+v", ode)
	}
	if p := by["pkg"]; p == nil || !strings.HasPrefix(p.Text, "-- pkg") && !strings.Contains(p.Text, "pkg") || strings.Contains(p.Text, "PWNED") {
		t.Errorf("pkg: the installed function's help, not the planted one: %+v", p)
	}
	if _, err := harvest.Octave(context.Background(), &harvest.OctaveOptions{Sandbox: sandboxed(t), Binary: "no-such-octave"}); !errors.Is(err, knowledge.ErrBadSource) ||
		!strings.Contains(err.Error(), "install the Debian package octave") {
		t.Errorf("missing binary: %v", err)
	}
	if _, err := harvest.Octave(context.Background(), nil); !errors.Is(err, knowledge.ErrBadSource) || !strings.Contains(err.Error(), "sandbox") {
		t.Errorf("no sandbox: %v; want a refusal to harvest unisolated", err)
	}
}

func TestPython(t *testing.T) {
	plant := "open('PWNED', 'w').write('ran')\n"
	dir := hostileDir(t, map[string]string{
		"numpy.py":         plant,
		"inspect.py":       plant,
		"sitecustomize.py": plant,
		".local/lib/python3.11/site-packages/usercustomize.py": plant,
	})
	sb := sandboxed(t)
	docs, err := harvest.Python(context.Background(), []string{"numpy.linalg"}, &harvest.PythonOptions{Sandbox: sb, Binary: "/usr/bin/python3"})
	if err != nil {
		t.Fatal(err)
	}
	notPwned(t, dir)
	var lstsq *knowledge.Doc
	for _, d := range docs {
		if d.Title == "numpy.linalg.lstsq" {
			lstsq = d
		}
	}
	if lstsq == nil || lstsq.Source != "python:numpy.linalg.lstsq" || !strings.Contains(lstsq.Summary, "least-squares") ||
		!strings.HasPrefix(lstsq.Text, " -- lstsq(a, b") {
		t.Fatalf("numpy.linalg.lstsq: %+v (of %d docs)", lstsq, len(docs))
	}
	_, err = harvest.Python(context.Background(), []string{"numpy", "no_such_module_xyz"}, &harvest.PythonOptions{Sandbox: sb, Binary: "/usr/bin/python3"})
	if !errors.Is(err, knowledge.ErrBadSource) || !strings.Contains(err.Error(), "no_such_module_xyz: ModuleNotFoundError") {
		t.Errorf("missing module: %v", err)
	}
}

func sandboxed(t *testing.T) harvest.Sandbox {
	return testutil.KernelOptions(t).Sandbox.(harvest.Sandbox)
}

// FuzzTexinfo: any help text renders without a panic, and no more text comes out than went in
// (plus the few characters symbols like @result{} expand to).
func FuzzTexinfo(f *testing.F) {
	for _, s := range []string{"@deftypefn {} {} f (@var{x})\n@end deftypefn", "@code{a@{b}", "@seealso{", "@@@{@}", "@ref{XREFa,,b}", "@tex\n$x$", "{{{}}}}", "@sup{@sub{x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sigs, body := harvest.Texinfo(s)
		n := len(body)
		for _, sig := range sigs {
			n += len(sig)
		}
		if n > 4*len(s)+16 {
			t.Errorf("%d bytes in, %d out", len(s), n)
		}
	})
}
