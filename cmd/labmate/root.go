package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/internal/tty"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/kernel/shell"
	"github.com/labmate/labmate/lab/bench/client"
	"github.com/labmate/labmate/sandbox"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// kernelKind is one kernel labmate can start.
type kernelKind struct {
	name    string
	exts    []string // file extensions run by this kernel
	start   func(context.Context, *kernel.Options) (kernel.Kernel, error)
	version func(context.Context) (string, error)
}

var kernels = []kernelKind{
	{"octave", []string{".m"}, octave.Start, octave.Version},
	{"python", []string{".py"}, python.Start, python.Version},
	{"shell", []string{".sh", ".bash"}, shell.Start, shell.Version},
}

func findKernel(name string) (kernelKind, error) {
	for _, k := range kernels {
		if k.name == name {
			return k, nil
		}
	}
	return kernelKind{}, fmt.Errorf("unknown kernel %q (choose octave, python or shell)", name)
}

// startKernel starts the named kernel in sb, working in workspace.
func startKernel(ctx context.Context, name string, sb kernel.Sandbox, workspace string) (kernel.Kernel, error) {
	kk, err := findKernel(name)
	if err != nil {
		return nil, err
	}
	return kk.start(ctx, kernelOptions(sb, workspace))
}

// kernelOptions are the options every kernel starts with: the sandbox, the workspace and the
// lab bench's client code as its library (Opentrons-style functions in Octave, the opentrons
// package in Python).
func kernelOptions(sb kernel.Sandbox, workspace string) *kernel.Options {
	return &kernel.Options{Sandbox: sb, Workspace: workspace, Library: client.Library}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "labmate",
		Short: "An AI lab partner that runs science in live, sandboxed kernels",
		Long: `labmate is an AI lab partner. It runs code in live, sandboxed interpreter sessions
(GNU Octave, Python with numpy/scipy, bash) that stream every line as it is printed and can
be interrupted without losing their workspace; perception judges the stream and the Hot-Fix
stops a run that diverges, turns NaN, oscillates, stalls or breaks a --watch constraint.
The kernels can use Octave's control, signal, optim, statistics and symbolic packages with
headless plots, matplotlib, sympy, pandas and ASE, Quantum ESPRESSO (pw.x), LAMMPS (lmp) and
Open MPI (labmate software lists them; labmate eval materials runs DFT and EAM scans).

On top of the kernels: an agent that plans, runs, repairs and re-plans on any
OpenAI-compatible or Anthropic model (labmate run); memory of facts and skills (labmate
memory); long jobs in the background, local or on Slurm (labmate job); closed-loop campaigns
(labmate campaign); benchmarks of any model, resumable (labmate eval); documentation and web
search (labmate docs); and a server with WebSocket, REST, MCP and a web dashboard (labmate
serve, labmate mcp).

Start with: labmate kernels, labmate software, labmate exec FILE, labmate model check,
labmate run "TASK", or labmate serve and open http://127.0.0.1:7878/.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// What a command prints on a terminal is mostly others' text — cells', jobs',
		// models' — which must not command the terminal (tty.Safe). Set once the flags are
		// parsed: cobra prints a deprecated flag's notice to the output writer when one is
		// set, and it belongs on stderr.
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			root := cmd.Root()
			root.SetOut(tty.Safe(root.OutOrStdout()))
			root.SetErr(tty.Safe(root.ErrOrStderr()))
		},
	}
	root.AddCommand(newVersionCmd(), newKernelsCmd(), newSoftwareCmd(), newExecCmd(), newServeCmd(), newMCPCmd())
	root.AddCommand(newCampaignCmd(), newEvalCmd(), newDocsCmd(), newMemoryCmd(), newModelCmd(), newRunCmd(), newJobCmd(), newSessionCmd(), newLabCmd())
	root.InitDefaultCompletionCmd() // made now, so that strict makes it strict too
	strict(root)
	return root
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print labmate's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rev := ""
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" && len(s.Value) >= 12 {
						rev = s.Value[:12]
					}
				}
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]string{"version": version, "revision": rev,
					"go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH})
			}
			if rev != "" {
				rev = " " + rev
			}
			fmt.Fprintf(cmd.OutOrStdout(), "labmate %s%s (%s, %s/%s)\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the version as JSON")
	return cmd
}

// sandboxFlags are the isolation flags shared by commands that run code.
type sandboxFlags struct {
	none    bool
	network bool
	memory  sizeFlag
	disk    sizeFlag
	cpus    cpusFlag
	user    string
}

func (f *sandboxFlags) add(cmd *cobra.Command) {
	f.memory.name, f.memory.check = "mem-limit", sandbox.CheckMemory
	f.disk.name, f.disk.check = "disk", sandbox.CheckDisk
	cmd.Flags().BoolVar(&f.none, "no-sandbox", false, "run WITHOUT isolation (only when no sandbox is possible and you trust the code)")
	cmd.Flags().BoolVar(&f.network, "network", false, "allow network access inside the sandbox")
	cmd.Flags().Var(&f.memory, "mem-limit", "memory budget of the whole sandbox — every process, /tmp and /dev/shm together — and each process's\n"+
		"address-space limit, e.g. 2G, 512M, 4GiB (default 4G), or unlimited")
	alias(cmd.Flags(), "memory", "", "mem-limit")
	cmd.Flags().Var(&f.cpus, "cpus", fmt.Sprintf("CPU time the sandbox may use, in cores, e.g. 1.5 (default all %d of this machine)", runtime.NumCPU()))
	cmd.Flags().Var(&f.disk, "disk", "workspace quota: how much the workspace may grow while a kernel runs, e.g. 20G (default 10G), or unlimited")
	cmd.Flags().StringVar(&f.user, "sandbox-user", "", "as root: the unprivileged host account sandboxed code runs as (default "+sandbox.HostUser+", which scripts/deps creates)")
}

// open returns the sandbox to use: the best available, or none when asked for explicitly. It
// refuses when the memory or process limit cannot be enforced for the sandbox as a whole.
func (f *sandboxFlags) open() (*sandbox.Sandbox, error) {
	policy := &sandbox.Policy{Network: f.network, MemoryBytes: f.memory.n, CPUs: f.cpus.n, DiskBytes: f.disk.n, Hide: sandbox.PrivateDirs(), HostUser: f.user}
	if f.none {
		return sandbox.New(sandbox.ModeNone, policy)
	}
	mode, err := sandbox.Detect()
	if err != nil {
		return nil, fmt.Errorf("no sandbox is available, so labmate refuses to run code: %w\n"+
			"  install bubblewrap (apt-get install bubblewrap), or pass --no-sandbox to run unisolated", err)
	}
	sb, err := sandbox.New(mode, policy)
	if err != nil {
		return nil, err
	}
	if err := sb.CheckLimits(); err != nil {
		return nil, fmt.Errorf("the sandbox's budget cannot be enforced here, so labmate refuses to run code: %w\n"+
			"  run labmate as root or in a delegated cgroup (systemd-run --user --scope -p Delegate=yes labmate …),\n"+
			"  or pass --mem-limit unlimited to run without a memory budget, or --no-sandbox to run unisolated", err)
	}
	return sb, nil
}

// sizeFlag is a size in bytes with units (2G, 512M, 4GiB) or "unlimited" (-1); 0 means the
// sandbox's default.
type sizeFlag struct {
	n          int64
	name       string
	check      func(int64) error
	zeroIsNone bool // 0 means none (-1), as "unlimited" does
}

func (f *sizeFlag) String() string {
	switch {
	case f.n < 0:
		return "unlimited"
	case f.n == 0:
		return ""
	}
	return sandbox.FormatSize(f.n)
}

func (f *sizeFlag) Type() string { return "size" }

func (f *sizeFlag) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "unlimited", "none":
		f.n = -1
		return nil
	}
	n, err := sandbox.ParseSize(s)
	if err != nil {
		return err
	}
	if n == 0 && f.zeroIsNone {
		f.n = -1
		return nil
	}
	if n == 0 {
		return fmt.Errorf("a --%s of 0 makes no sense (give a size such as 2G, or unlimited)", f.name)
	}
	if f.check != nil {
		if err := f.check(n); err != nil {
			return err
		}
	}
	f.n = n
	return nil
}

// cpusFlag is a number of cores, at most the machine's; 0 means all of them.
type cpusFlag struct{ n float64 }

func (f *cpusFlag) String() string {
	if f.n == 0 {
		return ""
	}
	return strconv.FormatFloat(f.n, 'g', -1, 64)
}

func (f *cpusFlag) Type() string { return "cores" }

func (f *cpusFlag) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%q is not a number of cores (e.g. 1, 1.5)", s)
	}
	if n := runtime.NumCPU(); v < 0.01 || v > float64(n) {
		return fmt.Errorf("%g cores: this machine has %d (give 0.01 to %d)", v, n, n)
	}
	f.n = v
	return nil
}
