package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/kernel/shell"
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

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "labmate",
		Short: "An AI lab partner that runs science in live, sandboxed kernels",
		Long: `labmate is an AI lab partner. It runs code in live, sandboxed interpreter sessions
(GNU Octave, Python with numpy/scipy, bash) that stream every line as it is printed and can
be interrupted without losing their workspace; perception judges the stream and the Hot-Fix
stops a run that diverges, turns NaN, oscillates, stalls or breaks a --watch constraint.

On top of the kernels: an agent that plans, runs, repairs and re-plans on any
OpenAI-compatible or Anthropic model (labmate run); memory of facts and skills (labmate
memory); closed-loop campaigns (labmate campaign); documentation and web search (labmate
docs); and a server with WebSocket, REST, MCP and a web dashboard (labmate serve, labmate mcp).

Start with: labmate kernels, labmate exec FILE, labmate model check, labmate run "TASK",
or labmate serve and open http://127.0.0.1:7878/.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCmd(), newKernelsCmd(), newExecCmd(), newServeCmd(), newMCPCmd())
	root.AddCommand(newCampaignCmd(), newBenchCmd(), newDocsCmd(), newMemoryCmd(), newModelCmd(), newRunCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print labmate's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rev := ""
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" && len(s.Value) >= 12 {
						rev = " " + s.Value[:12]
					}
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "labmate %s%s (%s, %s/%s)\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

// sandboxFlags are the isolation flags shared by commands that run code.
type sandboxFlags struct {
	none    bool
	network bool
	memory  int64
}

func (f *sandboxFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.none, "no-sandbox", false, "run WITHOUT isolation (only when no sandbox is possible and you trust the code)")
	cmd.Flags().BoolVar(&f.network, "network", false, "allow network access inside the sandbox")
	cmd.Flags().Int64Var(&f.memory, "memory", 0, "address-space limit in bytes for the interpreter (default 4 GiB)")
}

// open returns the sandbox to use: the best available, or none when asked for explicitly.
func (f *sandboxFlags) open() (*sandbox.Sandbox, error) {
	policy := &sandbox.Policy{Network: f.network, MemoryBytes: f.memory}
	if f.none {
		return sandbox.New(sandbox.ModeNone, policy)
	}
	mode, err := sandbox.Detect()
	if err != nil {
		return nil, fmt.Errorf("no sandbox is available, so labmate refuses to run code: %w\n"+
			"  install bubblewrap (apt-get install bubblewrap), or pass --no-sandbox to run unisolated", err)
	}
	return sandbox.New(mode, policy)
}
