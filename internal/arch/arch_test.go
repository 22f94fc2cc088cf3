package arch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/labmate/labmate"

// pkg is one package of the module as go list sees it, paths relative to the module.
type pkg struct {
	Path    string
	Imports []string // the module's packages the non-test files import
	Tests   []string // the module's packages the test files import
}

// rule says which of the module's packages a set of packages may import.
type rule struct {
	name  string
	of    func(p string) bool   // the packages the rule is about
	may   func(imp string) bool // whether one of them may import imp
	tests bool                  // test files too
	// testsMay adds what test files may import besides (a real sandbox for a kernel's tests).
	testsMay func(imp string) bool
	// pending, when set, reports the rule's current breaks instead of failing: the change
	// that removes them is on another branch (the rule is enabled when it lands).
	pending string
}

// under matches the packages at and below each of roots.
func under(roots ...string) func(string) bool {
	return func(p string) bool {
		for _, r := range roots {
			if p == r || strings.HasPrefix(p, r+"/") {
				return true
			}
		}
		return false
	}
}

// is matches exactly the packages named.
func is(names ...string) func(string) bool {
	return func(p string) bool { return slices.Contains(names, p) }
}

func or(fs ...func(string) bool) func(string) bool {
	return func(p string) bool {
		for _, f := range fs {
			if f(p) {
				return true
			}
		}
		return false
	}
}

func not(f func(string) bool) func(string) bool { return func(p string) bool { return !f(p) } }

// The interface packages at the roots of the domains.
var roots = []string{"kernel", "perception", "llm", "memory", "lab", "optimize", "job", "knowledge"}

// backends are the concrete implementations that talk to something outside: interpreters,
// model providers, databases, schedulers, web services.
var backends = or(
	is("kernel/octave", "kernel/python", "kernel/shell", "kernel/internal/engine"),
	is("llm/openai", "llm/anthropic", "llm/providers"),
	is("memory/sqlite", "memory/postgres", "memory/internal/sqlstore"),
	is("protocol/sqlite", "agent/sqlite", "lab/sqlite", "knowledge/sqlite"),
	is("job/local", "job/slurm"),
	is("knowledge/brave", "knowledge/searxng", "knowledge/tavily", "knowledge/arxiv", "knowledge/crossref", "knowledge/fetch"),
)

// implementations are the sub-packages of a domain (its root is its interface).
func implementationOf(domains ...string) func(string) bool {
	return func(p string) bool {
		for _, d := range domains {
			if strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		return false
	}
}

var rules = []rule{
	{
		name: "protocol is the bottom layer: protocol/… imports only protocol/… and internal/…",
		of:   under("protocol"),
		may:  under("protocol", "internal"),
	},
	{
		name: "an interface package imports only protocol and internal/…",
		of:   is(roots...),
		may:  or(is("protocol"), under("internal")),
	},
	{
		name: "tool imports only llm, protocol and internal/…",
		of:   is("tool"),
		may:  or(is("llm", "protocol"), under("internal")),
	},
	{
		name:     "kernel/… stays in the kernel: only kernel/…, protocol and internal/… (lab client code is a kernel.Options.Library)",
		of:       under("kernel"),
		may:      or(under("kernel", "internal"), is("protocol")),
		tests:    true,
		testsMay: is("sandbox"),
	},
	{
		name:  "perception is pure: perception/… imports only protocol and internal/…",
		of:    under("perception"),
		may:   or(is("protocol"), under("perception", "internal")),
		tests: true,
	},
	{
		name: "llm/… imports only llm/… and internal/…",
		of:   under("llm"),
		may:  under("llm", "internal"),
	},
	{
		name: "optimize/… imports only optimize/… and internal/…",
		of:   under("optimize"),
		may:  under("optimize", "internal"),
	},
	{
		name: "knowledge/… imports only knowledge/…, llm, tool, protocol, internal/… and the statement engine",
		of:   under("knowledge"),
		may:  or(under("knowledge", "internal"), is("llm", "tool", "protocol", "memory/statement")),
	},
	{
		name: "the lab uses kernels, operations and tools, never an agent, memory, job, server, eval or backend",
		of:   under("lab"),
		may:  not(or(under("agent", "memory", "job", "server", "eval", "cmd", "examples"), and(backends, not(under("lab"))))),
	},
	{
		name: "agent and operation import interfaces, never a concrete backend",
		of:   is("agent", "operation"),
		may:  not(or(backends, under("server", "cmd", "eval"))),
	},
	{
		name: "a harness is handed its material: eval/… does not import examples/…",
		of:   under("eval"),
		may:  not(under("examples")),
	},
	{
		name: "nothing imports the command, and only the command imports the server",
		of:   not(under("cmd", "server")),
		may:  not(under("cmd", "server")),
	},
	{
		// server is transport over the runner; its sub-package mcp adapts the capabilities'
		// tool sets (job/tools, agent/learn, lab/benchrun's tools) to MCP, as the agent does.
		name: "server imports no lab, memory, agent or job implementation",
		of:   is("server"),
		may:  not(implementationOf("lab", "memory", "agent", "job")),
	},
}

func and(fs ...func(string) bool) func(string) bool {
	return func(p string) bool {
		for _, f := range fs {
			if !f(p) {
				return false
			}
		}
		return true
	}
}

// load lists the module's packages and their imports of the module.
func load(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	rel := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			if p == module {
				out = append(out, ".")
			} else if r, ok := strings.CutPrefix(p, module+"/"); ok {
				out = append(out, r)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
			Error                              *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		path := strings.TrimPrefix(p.ImportPath, module+"/")
		tests := slices.DeleteFunc(rel(append(p.TestImports, p.XTestImports...)), func(s string) bool { return s == path })
		pkgs = append(pkgs, pkg{Path: path, Imports: rel(p.Imports), Tests: tests})
	}
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages of %s; expected the whole module", len(pkgs), module)
	}
	return pkgs
}

// breaks lists the imports that break r, as "from → to" (test files marked).
func (r rule) breaks(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		if !r.of(p.Path) {
			continue
		}
		for _, imp := range p.Imports {
			if imp != p.Path && !r.may(imp) {
				out = append(out, fmt.Sprintf("%s → %s", p.Path, imp))
			}
		}
		if r.tests {
			for _, imp := range p.Tests {
				if !r.may(imp) && (r.testsMay == nil || !r.testsMay(imp)) {
					out = append(out, fmt.Sprintf("%s (tests) → %s", p.Path, imp))
				}
			}
		}
	}
	return out
}

// TestImports checks the module's import graph against the layering of ARCHITECTURE.md.
func TestImports(t *testing.T) {
	if testing.Short() {
		t.Skip("go list of the whole module")
	}
	pkgs := load(t)
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			bad := r.breaks(pkgs)
			if r.pending != "" {
				if len(bad) == 0 {
					t.Errorf("the rule holds now: enable it (remove pending %q)", r.pending)
				}
				t.Skipf("pending (%s); %d forbidden imports today:\n\t%s", r.pending, len(bad), strings.Join(bad, "\n\t"))
			}
			for _, b := range bad {
				t.Errorf("forbidden import %s", b)
			}
		})
	}
}

// TestRulesCatch checks that each rule names a forbidden edge: a rule that forbids nothing
// cannot fail.
func TestRulesCatch(t *testing.T) {
	forbidden := map[string]pkg{
		"protocol is the bottom layer: protocol/… imports only protocol/… and internal/…":                                    {Path: "protocol/report", Imports: []string{"perception"}},
		"an interface package imports only protocol and internal/…":                                                          {Path: "memory", Imports: []string{"llm"}},
		"tool imports only llm, protocol and internal/…":                                                                     {Path: "tool", Imports: []string{"kernel"}},
		"kernel/… stays in the kernel: only kernel/…, protocol and internal/… (lab client code is a kernel.Options.Library)": {Path: "kernel/kerneltest", Imports: []string{"lab/bench"}},
		"perception is pure: perception/… imports only protocol and internal/…":                                              {Path: "perception", Tests: []string{"kernel/octave"}},
		"llm/… imports only llm/… and internal/…":                                                                            {Path: "llm/openai", Imports: []string{"tool"}},
		"optimize/… imports only optimize/… and internal/…":                                                                  {Path: "optimize/bayes", Imports: []string{"lab"}},
		"knowledge/… imports only knowledge/…, llm, tool, protocol, internal/… and the statement engine":                     {Path: "knowledge/sqlite", Imports: []string{"memory"}},
		"the lab uses kernels, operations and tools, never an agent, memory, job, server, eval or backend":                   {Path: "lab/benchrun", Imports: []string{"kernel/octave"}},
		"agent and operation import interfaces, never a concrete backend":                                                    {Path: "agent", Imports: []string{"llm/openai"}},
		"a harness is handed its material: eval/… does not import examples/…":                                                {Path: "eval/materials", Imports: []string{"examples/skills"}},
		"nothing imports the command, and only the command imports the server":                                               {Path: "agent", Imports: []string{"server"}},
		"server imports no lab, memory, agent or job implementation":                                                         {Path: "server", Imports: []string{"lab/bench"}},
	}
	for _, r := range rules {
		p, ok := forbidden[r.name]
		if !ok {
			t.Errorf("rule %q has no forbidden example here", r.name)
			continue
		}
		if len(r.breaks([]pkg{p})) == 0 {
			t.Errorf("rule %q lets %s import %v", r.name, p.Path, append(p.Imports, p.Tests...))
		}
	}
}
