package harvest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/labmate/labmate/knowledge"
)

// PythonOptions configure Python. Sandbox is required.
type PythonOptions struct {
	Sandbox Sandbox
	Binary  string        // "python3" when empty
	Timeout time.Duration // 5 minutes when zero
}

// pythonScript imports each module named on the command line and its public submodules (tests
// and private modules skipped) and prints, as JSON lines, the docstring and signature pydoc
// would show for the module and each public function and class defined in the package, once
// per object however many modules re-export it. A module that does not import is reported as
// {"error": …} and the others go on.
const pythonScript = `
import importlib, inspect, json, pkgutil, sys, warnings
warnings.simplefilter("ignore")
def emit(**kw):
    sys.stdout.write(json.dumps(kw) + "\n")
seen = set()
def doc_of(name, obj, module):
    if id(obj) in seen:
        return
    seen.add(id(obj))
    doc = inspect.getdoc(obj) or ""
    if not doc.strip():
        return
    sig = ""
    if callable(obj):
        try:
            sig = name.rsplit(".", 1)[-1] + str(inspect.signature(obj))
        except (TypeError, ValueError):
            pass
    emit(name=name, module=module, signature=sig, doc=doc)
def walk(root):
    try:
        mod = importlib.import_module(root)
    except Exception as e:
        emit(error="%s: %s: %s" % (root, type(e).__name__, e))
        return
    mods = [mod]
    for info in pkgutil.walk_packages(getattr(mod, "__path__", []) or [], root + ".", onerror=lambda n: None):
        parts = info.name.split(".")
        if any(p.startswith("_") or p in ("tests", "test", "testing", "conftest", "setup", "distutils", "f2py") for p in parts[1:]):
            continue
        try:
            mods.append(importlib.import_module(info.name))
        except Exception:
            continue
    top = root.split(".")[0]
    for m in mods:
        doc_of(m.__name__, m, m.__name__)
        names = getattr(m, "__all__", None)
        if names is None:
            names = [n for n in dir(m) if not n.startswith("_")]
        for n in names:
            try:
                obj = getattr(m, n)
            except Exception:
                continue
            if inspect.ismodule(obj) or not callable(obj):
                continue
            owner = getattr(obj, "__module__", None) or ""
            if not (owner == top or owner.startswith(top + ".")) and not type(obj).__name__ == "ufunc":
                continue
            doc_of(m.__name__ + "." + n, obj, m.__name__)
for root in sys.argv[1:]:
    walk(root)
emit(done=True)
`

type pyRecord struct {
	Name      string `json:"name"`
	Module    string `json:"module"`
	Signature string `json:"signature"`
	Doc       string `json:"doc"`
	Error     string `json:"error"`
	Done      bool   `json:"done"`
}

// Python returns one "help" document per documented public module, function and class of the
// installed Python modules named (and their public submodules), run in opts.Sandbox. Sources are "python:NAME",
// headings the module. A module that does not import is an error naming it.
func Python(ctx context.Context, modules []string, opts *PythonOptions) ([]*knowledge.Doc, error) {
	if opts == nil {
		opts = &PythonOptions{}
	}
	if len(modules) == 0 {
		return nil, fmt.Errorf("%w: python help harvest: no module named", knowledge.ErrBadSource)
	}
	for _, m := range modules {
		if m == "" || strings.ContainsAny(m, " /\\") || strings.HasPrefix(m, "-") {
			return nil, fmt.Errorf("%w: python help harvest: %q is not a module name", knowledge.ErrBadSource, m)
		}
	}
	bin := opts.Binary
	if bin == "" {
		bin = "python3"
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	stdout, stderr, err := run(ctx, opts.Sandbox, "python help harvest", "python3", append([]string{bin, "-I", "-c", pythonScript}, modules...), timeout)
	if err != nil {
		return nil, err
	}
	var docs []*knowledge.Doc
	var failed []string
	done := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var r pyRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%w: python help harvest: output line %d is not JSON: %w", knowledge.ErrBadSource, n, err)
		}
		switch {
		case r.Done:
			done = true
		case r.Error != "":
			failed = append(failed, r.Error)
		case r.Name != "":
			text := r.Doc
			if r.Signature != "" {
				text = " -- " + r.Signature + "\n\n" + text
			}
			docs = append(docs, &knowledge.Doc{
				Source:  "python:" + r.Name,
				Title:   r.Name,
				Format:  "help",
				Summary: knowledge.FirstSentence(r.Doc),
				Heading: r.Module,
				Text:    text,
			})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: python help harvest: %w", knowledge.ErrBadSource, err)
	}
	if !done {
		return nil, fmt.Errorf("%w: python help harvest: the output was cut short: %s", knowledge.ErrBadSource, tail(stderr.String()))
	}
	if len(failed) > 0 {
		return nil, fmt.Errorf("%w: python help harvest: %s", knowledge.ErrBadSource, strings.Join(failed, "; "))
	}
	return docs, nil
}
