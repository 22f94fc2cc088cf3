package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/job/local"
	"github.com/labmate/labmate/sandbox"
)

func newKernelsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "kernels",
		Short: "List the kernels, their interpreter versions, the sandbox and which of its limits are enforced",
		Long: `List the kernels and their interpreter versions, the sandbox labmate would use, and each
limit of its default policy (the whole sandbox's memory with /tmp, processes, CPU, the workspace
disk quota, the file size, /tmp) with what enforces it here: cgroup v1 or v2, an rlimit, the
quota watchdog, the tmpfs size. When the memory or process limit cannot be enforced, commands
that run code refuse unless --no-sandbox; the exit status is then 1. The scientific software
the kernels can use (Octave packages, Python modules, pw.x, lmp, mpirun) is listed by
labmate software.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows := kernelInfos(cmd.Context())
			var isolation, problem, unenforced string
			var limits []sandbox.Limit
			if mode, err := sandbox.Detect(); err != nil {
				problem = err.Error()
			} else if sb, err := sandbox.New(mode, nil); err != nil {
				problem = err.Error()
			} else {
				isolation, limits = sb.Describe(), sb.Limits()
				if err := sb.CheckLimits(); err != nil {
					unenforced = err.Error()
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				err := json.NewEncoder(out).Encode(map[string]any{
					"kernels": rows,
					"sandbox": map[string]any{"available": problem == "", "description": isolation, "error": problem,
						"limits": limits, "enforced": problem == "" && unenforced == "", "unenforced": unenforced},
					"job_disk_quota_bytes": int64(local.DefaultDiskBytes),
				})
				if err == nil && (problem != "" || unenforced != "") {
					return exitError{1}
				}
				return err
			}
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "KERNEL\tVERSION")
			for _, r := range rows {
				v := r.Version
				if r.Error != "" {
					v = "NOT AVAILABLE: " + r.Error
				}
				fmt.Fprintf(w, "%s\t%s\n", r.Name, v)
			}
			w.Flush()
			fmt.Fprintln(out, "\nscientific software (Octave packages, Python modules, pw.x, lmp, mpirun): labmate software")
			if problem != "" {
				fmt.Fprintf(out, "\nSANDBOX: NONE AVAILABLE — %s\n"+
					"!!! labmate refuses to run code without isolation unless you pass --no-sandbox !!!\n", problem)
				return exitError{1}
			}
			fmt.Fprintf(out, "\nsandbox: %s\n\n", isolation)
			w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "LIMIT\tVALUE\tENFORCED\tHOW")
			for _, l := range limits {
				enforced := "yes"
				if !l.Enforced {
					enforced = "NO"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", l.Name, l.Value, enforced, l.How)
			}
			w.Flush()
			if uid, gid, ok := sandbox.HostIdentity(); ok {
				fmt.Fprintf(out, "\nlabmate runs as root: in every mode, --no-sandbox too, code runs as the unprivileged uid %d (gid %d), never as root\n", uid, gid)
			}
			fmt.Fprintf(out, "\nlocal jobs: the same sandbox, and a workspace quota of %s unless the job asks for another (labmate job submit --disk SIZE; --disk 0: none), enforced by the job's supervisor\n",
				sandbox.FormatSize(local.DefaultDiskBytes))
			if unenforced != "" {
				fmt.Fprintf(out, "\n!!! labmate refuses to run code here unless you pass --no-sandbox (or --mem-limit unlimited): %s !!!\n", unenforced)
				return exitError{1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// kernelFor is the kernel that runs a file, from its extension.
func kernelFor(path string) (string, error) {
	ext := filepath.Ext(path)
	for _, k := range kernels {
		if slices.Contains(k.exts, ext) {
			return k.name, nil
		}
	}
	if path == "-" {
		return "", errors.New("reading the cell from stdin: say which kernel runs it with --kernel octave|python|shell")
	}
	return "", fmt.Errorf("%s: cannot tell the kernel from the extension %q: pass --kernel octave|python|shell", path, ext)
}
