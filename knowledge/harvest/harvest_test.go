package harvest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

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

func TestOctave(t *testing.T) {
	docs, err := harvest.Octave(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
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
	if _, err := harvest.Octave(context.Background(), &harvest.OctaveOptions{Binary: "no-such-octave"}); !errors.Is(err, knowledge.ErrBadSource) ||
		!strings.Contains(err.Error(), "install the Debian package octave") {
		t.Errorf("missing binary: %v", err)
	}
}

func TestPython(t *testing.T) {
	docs, err := harvest.Python(context.Background(), []string{"numpy.linalg"}, &harvest.PythonOptions{Binary: "/usr/bin/python3"})
	if err != nil {
		t.Fatal(err)
	}
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
	_, err = harvest.Python(context.Background(), []string{"numpy", "no_such_module_xyz"}, &harvest.PythonOptions{Binary: "/usr/bin/python3"})
	if !errors.Is(err, knowledge.ErrBadSource) || !strings.Contains(err.Error(), "no_such_module_xyz: ModuleNotFoundError") {
		t.Errorf("missing module: %v", err)
	}
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
