// Package software finds the scientific software labmate's kernels can use: GNU Octave with
// its packages and headless plotting, Python with its scientific modules, Quantum ESPRESSO
// (pw.x) with its pseudopotentials, LAMMPS (lmp) with its interatomic potentials, and Open MPI
// (mpirun), each with its version and what it found.
//
// Probing is quick and safe: the probes run in parallel, each with a timeout; programs are
// looked up only in the system directories (never in the caller's PATH or current directory)
// and run in a fresh empty directory with a minimal environment; Octave's packages and the
// data folders are read as files, not by running anything.
package software

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Groups of software, in the order Probe returns them.
const (
	GroupOctave = "octave"
	GroupPython = "python"
	GroupQE     = "quantum-espresso"
	GroupLAMMPS = "lammps"
	GroupMPI    = "mpi"
)

// Item is one piece of software and what was found of it.
type Item struct {
	Group   string `json:"group"`
	Name    string `json:"name"`              // "octave", "control", "numpy", "pw.x", …
	Version string `json:"version,omitempty"` // empty when missing
	Path    string `json:"path,omitempty"`    // the program or the package's folder
	Package string `json:"package"`           // the Debian package that provides it
	// Features are what the program reports it has built in (LAMMPS' packages), or the
	// labmate toolbox's functions.
	Features []string `json:"features,omitempty"`
	Data     *Data    `json:"data,omitempty"`
	Note     string   `json:"note,omitempty"`
	// Error says why it is missing or could not be probed.
	Error string `json:"error,omitempty"`
}

// Data is a folder of data files a code uses.
type Data struct {
	Dir   string `json:"dir"`
	What  string `json:"what"`
	Count int    `json:"count"`
	// Elements are the chemical elements with at least one file (pseudopotentials).
	Elements []string `json:"elements,omitempty"`
	// Kinds counts the files by kind (the name after its first dot: eam, eam.alloy, tersoff…).
	Kinds map[string]int `json:"kinds,omitempty"`
}

// Options tune Probe; nil means the defaults.
type Options struct {
	// Timeout bounds each probe (default 5 s).
	Timeout time.Duration
	// Toolbox names labmate's Octave implementations of toolbox functions, reported with
	// which package, if any, already provides each.
	Toolbox []string
}

// Where the Debian packages put things.
var (
	// SystemPath is where programs are looked up: never the caller's PATH.
	SystemPath = []string{"/usr/local/bin", "/usr/bin", "/bin"}
	// OctavePackages holds one folder NAME-VERSION per installed Octave package.
	OctavePackages = "/usr/share/octave/packages"
	// PseudoDir holds Quantum ESPRESSO's pseudopotentials (quantum-espresso-data).
	PseudoDir = "/usr/share/espresso/pseudo"
	// PotentialsDir holds LAMMPS' interatomic potentials (lammps-data).
	PotentialsDir = "/usr/share/lammps/potentials"
)

// The software the science stacks need, with their Debian packages.
var (
	octavePackages = [][2]string{
		{"control", "octave-control"}, {"signal", "octave-signal"}, {"optim", "octave-optim"},
		{"statistics", "octave-statistics"}, {"symbolic", "octave-symbolic"},
	}
	pythonModules = [][2]string{
		{"numpy", "python3-numpy"}, {"scipy", "python3-scipy"}, {"matplotlib", "python3-matplotlib"},
		{"sympy", "python3-sympy"}, {"pandas", "python3-pandas"}, {"ase", "python3-ase"},
	}
)

// Probe finds everything, in parallel, and returns it by group: Octave (the interpreter, its
// packages, gnuplot and ghostscript for plots, labmate's toolbox), Python (the interpreter and
// its modules), Quantum ESPRESSO, LAMMPS and MPI. A missing piece is an Item with Error set.
func Probe(ctx context.Context, opts *Options) []Item {
	o := Options{Timeout: 5 * time.Second}
	if opts != nil {
		if opts.Timeout > 0 {
			o.Timeout = opts.Timeout
		}
		o.Toolbox = opts.Toolbox
	}
	probes := []func(context.Context) []Item{
		func(ctx context.Context) []Item { return probeOctave(ctx) },
		func(context.Context) []Item { return octavePackageItems(o.Toolbox) },
		func(ctx context.Context) []Item {
			return []Item{versionItem(ctx, GroupOctave, "gnuplot", "gnuplot-nox", `gnuplot (\S+ patchlevel \S+)`, "gnuplot", "--version")}
		},
		func(ctx context.Context) []Item {
			it := versionItem(ctx, GroupOctave, "ghostscript", "ghostscript", `^(\S+)`, "gs", "--version")
			if it.Error == "" {
				it.Note = "for print -dpng and -dpdf"
			}
			return []Item{it}
		},
		probePython,
		probeQE,
		probeLAMMPS,
		func(ctx context.Context) []Item {
			return []Item{versionItem(ctx, GroupMPI, "mpirun", "openmpi-bin", `\(Open MPI\) (\S+)`, "mpirun", "--version")}
		},
	}
	results := make([][]Item, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, o.Timeout)
			defer cancel()
			results[i] = p(ctx)
		})
	}
	wg.Wait()
	var items []Item
	for _, r := range results {
		items = append(items, r...)
	}
	order := []string{GroupOctave, GroupPython, GroupQE, GroupLAMMPS, GroupMPI}
	slices.SortStableFunc(items, func(a, b Item) int {
		return slices.Index(order, a.Group) - slices.Index(order, b.Group)
	})
	return items
}

// lookPath finds name in SystemPath only; an absolute name is taken as it is.
func lookPath(name string) (string, error) {
	if filepath.IsAbs(name) {
		return name, nil
	}
	for _, d := range SystemPath {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s", name, strings.Join(SystemPath, ":"))
}

// run runs a system program with args in a fresh empty directory and a minimal environment,
// killing its process group when ctx ends, and returns its stdout and stderr together.
func run(ctx context.Context, name string, stdin []byte, args ...string) (string, string, error) {
	path, err := lookPath(name)
	if err != nil {
		return "", "", err
	}
	dir, err := os.MkdirTemp("", "labmate-probe-")
	if err != nil {
		return path, "", err
	}
	defer os.RemoveAll(dir)
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + strings.Join(SystemPath, ":"), "HOME=" + dir, "TMPDIR=" + dir, "LANG=C.UTF-8",
		"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"}
	cmd.Stdin = bytes.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s: no answer within the probe's timeout: %w", path, ctx.Err())
	}
	return path, out.String(), err
}

// versionItem runs a program and takes its version from the first match of pattern's group.
func versionItem(ctx context.Context, group, name, pkg, pattern string, args ...string) Item {
	it := Item{Group: group, Name: name, Package: pkg}
	path, out, err := run(ctx, args[0], nil, args[1:]...)
	it.Path = path
	if m := regexp.MustCompile(`(?m)` + pattern).FindStringSubmatch(out); m != nil {
		it.Version = m[1]
		return it
	}
	it.Error = missing(pkg, err, out)
	return it
}

// missing is the Error of something not found or not answering.
func missing(pkg string, err error, out string) string {
	if err == nil {
		err = errors.New("no version in its output")
	}
	msg := err.Error()
	if out = strings.TrimSpace(out); out != "" {
		first, _, _ := strings.Cut(out, "\n")
		msg += ": " + first
	}
	return fmt.Sprintf("%s (Debian package %s; run scripts/deps)", msg, pkg)
}

func probeOctave(ctx context.Context) []Item {
	return []Item{versionItem(ctx, GroupOctave, "octave", "octave", `version (\S+)`, "octave-cli", "--version")}
}

// octavePackageItems reads the installed packages' DESCRIPTION files; the required ones come
// first, missing or not, then any others; then labmate's toolbox.
func octavePackageItems(toolbox []string) []Item {
	found := map[string]Item{}
	dirs, _ := filepath.Glob(filepath.Join(OctavePackages, "*", "packinfo", "DESCRIPTION"))
	for _, d := range dirs {
		f, err := os.Open(d)
		if err != nil {
			continue
		}
		var name, version string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			switch {
			case !ok:
			case strings.EqualFold(k, "Name"):
				name = strings.ToLower(strings.TrimSpace(v))
			case strings.EqualFold(k, "Version"):
				version = strings.TrimSpace(v)
			}
		}
		f.Close()
		if name != "" {
			found[name] = Item{Group: GroupOctave, Name: name, Version: version, Path: filepath.Dir(filepath.Dir(d)), Package: "octave-" + name}
		}
	}
	var items []Item
	for _, p := range octavePackages {
		it, ok := found[p[0]]
		if !ok {
			it = Item{Group: GroupOctave, Name: p[0], Package: p[1],
				Error: fmt.Sprintf("not installed in %s (Debian package %s; run scripts/deps)", OctavePackages, p[1])}
		}
		it.Note = "pkg load " + p[0]
		items = append(items, it)
		delete(found, p[0])
	}
	var others []string
	for n := range found {
		others = append(others, n)
	}
	slices.Sort(others)
	for _, n := range others {
		it := found[n]
		it.Note = "pkg load " + n
		items = append(items, it)
	}
	if len(toolbox) > 0 {
		it := Item{Group: GroupOctave, Name: "labmate toolbox", Package: "labmate", Features: toolbox,
			Note: "on the kernel's path after everything else"}
		var provided []string
		for _, fn := range toolbox {
			if m, _ := filepath.Glob(filepath.Join(OctavePackages, "*", fn+".m")); len(m) > 0 {
				provided = append(provided, fn+" (also in "+filepath.Base(filepath.Dir(m[0]))+", which wins once loaded)")
			}
		}
		if len(provided) > 0 {
			it.Note += "; " + strings.Join(provided, ", ")
		}
		items = append(items, it)
	}
	return items
}

// pythonProbe prints the interpreter's version and each distribution's, as JSON, without
// importing the modules (importlib.metadata reads their metadata files).
const pythonProbe = `import sys, json, importlib.metadata as md
out = {"python": sys.version.split()[0], "modules": {}}
for name in sys.argv[1:]:
    try:
        out["modules"][name] = md.version(name)
    except md.PackageNotFoundError:
        out["modules"][name] = None
print(json.dumps(out))`

func probePython(ctx context.Context) []Item {
	const binary = "/usr/bin/python3" // the Python kernel's interpreter
	py := Item{Group: GroupPython, Name: "python", Package: "python3", Path: binary}
	args := []string{"-I", "-c", pythonProbe}
	for _, m := range pythonModules {
		args = append(args, m[0])
	}
	var v struct {
		Python  string             `json:"python"`
		Modules map[string]*string `json:"modules"`
	}
	_, out, err := run(ctx, binary, nil, args...)
	if err == nil {
		err = json.Unmarshal([]byte(out), &v)
	}
	items := []Item{py}
	if err != nil {
		items[0].Error = missing("python3", err, out)
		return items
	}
	items[0].Version = v.Python
	for _, m := range pythonModules {
		it := Item{Group: GroupPython, Name: m[0], Package: m[1], Note: "import " + m[0]}
		if ver := v.Modules[m[0]]; ver != nil {
			it.Version = *ver
		} else {
			it.Error = fmt.Sprintf("not installed for %s (Debian package %s; run scripts/deps)", binary, m[1])
		}
		items = append(items, it)
	}
	return items
}

// elementOf is the element symbol a pseudopotential file's name starts with: Si.pz-vbc.UPF,
// pb_s.UPF, C_3.98148.UPF.
var elementOf = regexp.MustCompile(`^([A-Za-z][a-z]?)[._-]`)

func probeQE(ctx context.Context) []Item {
	// pw.x prints its banner and then fails on the empty input: the version is in the banner.
	it := Item{Group: GroupQE, Name: "pw.x", Package: "quantum-espresso"}
	path, out, err := run(ctx, "pw.x", nil)
	it.Path = path
	if m := regexp.MustCompile(`Program PWSCF v\.(\S+)`).FindStringSubmatch(out); m != nil {
		it.Version = m[1]
	} else {
		it.Error = missing("quantum-espresso", err, out)
	}
	d := &Data{Dir: PseudoDir, What: "pseudopotentials (UPF)"}
	entries, err := os.ReadDir(PseudoDir)
	if err != nil {
		it.Note = fmt.Sprintf("no pseudopotentials: %v (Debian package quantum-espresso-data)", err)
		return []Item{it}
	}
	elements := map[string]bool{}
	for _, e := range entries {
		if !strings.EqualFold(filepath.Ext(e.Name()), ".upf") {
			continue
		}
		d.Count++
		if m := elementOf.FindStringSubmatch(e.Name()); m != nil {
			elements[strings.ToUpper(m[1][:1])+strings.ToLower(m[1][1:])] = true
		}
	}
	for el := range elements {
		d.Elements = append(d.Elements, el)
	}
	slices.Sort(d.Elements)
	it.Data = d
	return []Item{it}
}

func probeLAMMPS(ctx context.Context) []Item {
	it := Item{Group: GroupLAMMPS, Name: "lmp", Package: "lammps"}
	path, out, err := run(ctx, "lmp", nil, "-h")
	it.Path = path
	if m := regexp.MustCompile(`Massively Parallel Simulator - (.+?)\s*$`).FindStringSubmatch(firstLineWith(out, "Massively Parallel Simulator")); m != nil {
		it.Version = m[1]
		if _, after, ok := strings.Cut(out, "Installed packages:"); ok {
			block, _, _ := strings.Cut(strings.TrimLeft(after, "\n"), "\n\n")
			it.Features = strings.Fields(block)
		}
	} else {
		it.Error = missing("lammps", err, out)
	}
	entries, err := os.ReadDir(PotentialsDir)
	if err != nil {
		it.Note = fmt.Sprintf("no potentials: %v (Debian package lammps-data)", err)
		return []Item{it}
	}
	d := &Data{Dir: PotentialsDir, What: "interatomic potentials", Kinds: map[string]int{}}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		d.Count++
		if _, kind, ok := strings.Cut(e.Name(), "."); ok {
			d.Kinds[kind]++
		}
	}
	it.Data = d
	it.Note = "pair_coeff * * " + PotentialsDir + "/FILE …"
	return []Item{it}
}

func firstLineWith(s, sub string) string {
	for l := range strings.Lines(s) {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
