package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/local"
	"github.com/labmate/labmate/job/report"
	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
)

// maxJobMemory bounds --mem-limit on Slurm, whose nodes this machine cannot see: more is a typo.
const maxJobMemory = 64 << 40

func newJobSubmitCmd() *cobra.Command {
	var (
		script, name, workspace, partition string
		profile, hotfix, scheduler         string
		cores, gpus                        int
		memory                             = sizeFlag{name: "mem-limit"}
		disk                               = sizeFlag{name: "disk", check: sandbox.CheckDisk, zeroIsNone: true}
		wall                               wallTimeFlag
		env, follow                        []string
		asJSON, wait                       bool
		dirs                               jobDirs
	)
	cmd := &cobra.Command{
		Use:   "submit [flags] [--] COMMAND [ARGS…] | submit [flags] --script FILE|- | submit [flags] FILE",
		Short: "Submit a job that runs in the background and outlives labmate",
		Long: `Submit a job: COMMAND with its ARGS (flags after COMMAND are the command's; -- before it
is allowed), or a bash script (--script FILE, or - for stdin; a lone FILE that is a file here
and no command, as with sbatch run.sh, is the same as --script FILE), run in --workspace (default
the current directory) by --scheduler local (this machine, in the kernels' sandbox: the
workspace is the only writable directory, no network) or slurm (sbatch; Slurm's commands
must be on PATH).

Resources: --cores, --mem-limit (512M, 2G, 1.5GiB: the job's budget, every process together; a
local job that allocates more is stopped by its limit), --time (the wall time: 1:30:00, 90
(minutes, as sbatch reads it), 2-00:00:00, 90m, 2h; then the job is stopped, TIMEOUT),
--disk (local only: how much the workspace may grow while the job runs, e.g. 20G; past it the
job is stopped, FAILED with the quota in its reason; default none), --gpus and --partition
(Slurm only). --env K=V sets a variable; --follow FILE (relative to
the workspace) adds the lines a file gains to the job's log, e.g. QE's output file or
log.lammps. --profile names the software perception reads (qe, lammps, octave, python,
shell, generic; default: from the command) and --hotfix when it may cancel the job
(on_error, the default; on_warning; off).

Prints the job's id on stdout (with --json, its status as one JSON object); stderr says whether
it runs or is queued, and how to follow it. A local job that does not fit beside the running
ones is QUEUED and starts when a running job ends, or while a labmate process holds the job
directory open (labmate job wait ID, labmate serve, labmate mcp): --wait keeps this process
until the job ends, starting it when there is room, and exits as labmate job wait does. A
running local job is watched by perception where it runs, by a supervisor of its own, whether
or not labmate runs: an Error verdict cancels it unless --hotfix off.

Exit status: 0 when submitted (with --wait: 0 COMPLETED, 1 FAILED, 3 CANCELLED, 4 LOST,
124 TIMEOUT, 130 when interrupted — the job keeps running), 2 when labmate could not submit it.`,
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if scheduler != "local" && scheduler != "slurm" {
			return fmt.Errorf("--scheduler %q: choose local or slurm", scheduler)
		}
		if script == "" {
			file, err := scriptOf(args, scheduler)
			if err != nil {
				return err
			}
			if file != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "labmate: %s is a file, not a command: it runs as the job's bash script (as --script %s)\n", file, file)
				script, args = file, nil
			}
		}
		spec := &job.Spec{Name: name, Command: args}
		switch {
		case script != "" && len(args) > 0:
			return fmt.Errorf("give a command (%s) or --script %s, not both", strings.Join(args, " "), script)
		case script == "" && len(args) == 0:
			return fmt.Errorf("nothing to run: give a command (labmate job submit -- python sim.py) or --script FILE")
		case script != "":
			code, err := readCode(cmd.InOrStdin(), script)
			if err != nil {
				return fmt.Errorf("--script %s: %w", script, err)
			}
			if strings.TrimSpace(code) == "" {
				return fmt.Errorf("--script %s is empty", script)
			}
			spec.Script = code
		}
		var err error
		if spec.Workspace, err = workspaceDir(workspace); err != nil {
			return err
		}
		// The scheduler follows no symbolic link in a job's workspace: the user's are
		// resolved here, once.
		if spec.Workspace, err = filepath.EvalSymlinks(spec.Workspace); err != nil {
			return fmt.Errorf("--workspace %s: %w", workspace, err)
		}
		switch {
		case cores < 0:
			return fmt.Errorf("--cores %d: give a positive number of cores", cores)
		case scheduler == "local" && cores > runtime.NumCPU():
			return fmt.Errorf("--cores %d: this machine has %d", cores, runtime.NumCPU())
		case gpus < 0:
			return fmt.Errorf("--gpus %d: give a positive number of GPUs", gpus)
		case memory.n < 0:
			return fmt.Errorf("--mem-limit unlimited: a job needs a budget (e.g. 4G); leave --mem-limit out for the default")
		case memory.n > 0 && memory.n < sandbox.MinMemoryBytes:
			return fmt.Errorf("--mem-limit %s: below the minimum of %s a job needs", memory.String(), sandbox.FormatSize(sandbox.MinMemoryBytes))
		case scheduler == "slurm" && memory.n > maxJobMemory:
			return fmt.Errorf("--mem-limit %s: more than any node has (a typo?)", memory.String())
		case scheduler == "slurm" && disk.n > 0:
			return fmt.Errorf("--disk is for local jobs: a Slurm cluster's file systems have their own quotas")
		case scheduler == "local" && (gpus > 0 || partition != ""):
			return fmt.Errorf("--gpus and --partition are Slurm's: local jobs have none (use --scheduler slurm)")
		}
		if scheduler == "local" && memory.n > 0 {
			if err := sandbox.CheckMemory(memory.n); err != nil {
				return fmt.Errorf("--mem-limit %s: %w", memory.String(), err)
			}
		}
		spec.Resources = job.Resources{Cores: cores, MemoryBytes: max(memory.n, 0), WallTime: wall.d, GPUs: gpus, Partition: partition, DiskBytes: max(disk.n, job.NoDiskQuota)}
		for _, kv := range env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return fmt.Errorf("--env %q: want NAME=VALUE", kv)
			}
			if spec.Env == nil {
				spec.Env = map[string]string{}
			}
			spec.Env[k] = v
		}
		for _, f := range follow {
			if f == "" || filepath.IsAbs(f) || !filepath.IsLocal(f) || f != filepath.Clean(f) {
				return fmt.Errorf("--follow %q: give a clean path relative to the workspace, e.g. scf.out", f)
			}
		}
		spec.Follow = follow
		if profile != "" {
			p, err := perception.ParseProfile(profile)
			if err != nil {
				return fmt.Errorf("--profile: %w", err)
			}
			spec.Profile = string(p)
		}
		switch h := protocol.Hotfix(hotfix); h {
		case protocol.HotfixOnError, protocol.HotfixOnWarning, protocol.HotfixOff:
			spec.Hotfix = h
		default:
			return fmt.Errorf("--hotfix %q: choose on_error, on_warning or off", hotfix)
		}
		if err := spec.Validate(); err != nil {
			return err
		}
		if err := sandbox.CheckUserEnv(spec.Env); err != nil {
			return fmt.Errorf("--%w", err)
		}
		s, closeS, err := dirs.open(scheduler)
		if err != nil {
			return err
		}
		defer closeS()
		ctx, stop := interruptible(cmd)
		defer stop()
		id, err := s.Submit(ctx, spec)
		if err != nil {
			return err
		}
		st, err := s.Status(ctx, id)
		if err != nil {
			return err
		}
		stderr := cmd.ErrOrStderr()
		if !wait {
			fmt.Fprintln(stderr, "labmate:", report.Submitted(st))
			if asJSON {
				return report.Status(cmd.OutOrStdout(), st, true)
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), id)
			return err
		}
		if !asJSON {
			fmt.Fprintln(cmd.OutOrStdout(), id)
		}
		fmt.Fprintf(stderr, "labmate: job %s %s; waiting for it to end (Ctrl-C stops waiting, not the job)\n", id, strings.ToLower(string(st.State)))
		return waitJob(ctx, cmd, s, id, asJSON)
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // flags after COMMAND are the command's
	f.StringVar(&script, "script", "", "run this bash script (a file, or - for stdin) instead of a command")
	f.StringVar(&name, "name", "", "a name for the job, shown by status and list")
	f.StringVar(&workspace, "workspace", "", "the job's working directory (default: the current directory)")
	f.IntVar(&cores, "cores", 0, "cores the job gets (default 1)")
	f.Var(&memory, "mem-limit", "the job's memory budget, e.g. 512M, 2G, 1.5GiB (default: the sandbox's, 4G or half the machine's)")
	alias(f, "memory", "", "mem-limit")
	f.Var(&disk, "disk", "workspace quota of a local job: how much its workspace may grow while it runs, e.g. 20G; 0 or none: no quota (default: "+sandbox.FormatSize(local.DefaultDiskBytes)+")")
	f.Var(&wall, "time", "wall time, e.g. 1:30:00, 90 (minutes), 2-00:00:00, 90m, 2h (default: none locally, the partition's on Slurm)")
	f.IntVar(&gpus, "gpus", 0, "GPUs (Slurm only)")
	f.StringVar(&partition, "partition", "", "the Slurm partition (Slurm only; default: the cluster's)")
	f.StringArrayVar(&env, "env", nil, "an environment variable for the job, NAME=VALUE (repeatable)")
	f.StringArrayVar(&follow, "follow", nil, "a workspace file whose new lines are part of the job's log, e.g. scf.out (repeatable)")
	f.StringVar(&profile, "profile", "", "the software perception reads: qe, lammps, octave, python, shell or generic (default: from the command)")
	f.StringVar(&hotfix, "hotfix", string(protocol.HotfixOnError), "when perception may cancel the job: on_error, on_warning or off")
	f.StringVar(&scheduler, "scheduler", "local", "where the job runs: local (this machine) or slurm (sbatch)")
	f.BoolVar(&asJSON, "json", false, "print the job's status as JSON (with --wait: its final status)")
	f.BoolVar(&wait, "wait", false, "stay until the job ends (starting it when it is queued); exit with its outcome")
	dirs.add(cmd)
	return cmd
}

// wallTimeFlag is a wall time in Slurm's forms or as a Go duration (job.ParseWallTime).
type wallTimeFlag struct{ d time.Duration }

func (f *wallTimeFlag) String() string {
	if f.d == 0 {
		return ""
	}
	return job.FormatWallTime(f.d)
}

func (f *wallTimeFlag) Type() string { return "duration" }

func (f *wallTimeFlag) Set(s string) error {
	d, err := job.ParseWallTime(s)
	if err != nil {
		return err
	}
	f.d = d
	return nil
}
