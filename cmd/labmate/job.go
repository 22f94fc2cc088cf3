package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/local"
	"github.com/labmate/labmate/job/slurm"
)

func newJobCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "job",
		Short: "Long jobs in the background: submit, status, logs, cancel, list, wait",
		Long: `Run long computations (a DFT or MD run of hours, a sweep) as jobs that outlive labmate:
on this machine in the kernels' sandbox (--scheduler local, the default), or on a Slurm
cluster (--scheduler slurm). Come back with labmate job status, logs or wait from any
shell, later.

Local jobs live in DATA/jobs; Slurm jobs are recorded in DATA/slurm (it must be on a file
system the compute nodes see, as a home directory is on most clusters). A job's id says which
scheduler holds it: local-… or slurm-…; list shows both (Slurm once a job was submitted
to it). DATA is --data, default $XDG_DATA_HOME/labmate or ~/.local/share/labmate.

A local job runs at once when the machine's cores and memory allow beside the running jobs;
otherwise it is QUEUED, and starts when a running job ends, or while a labmate process holds
the job directory open: labmate job wait ID, labmate job submit --wait, labmate serve or
labmate mcp. Running jobs need nobody: each has a supervisor of its own, which outlives
labmate and watches the job with perception from its start to its end — an Error verdict
cancels it, as labmate job wait would, unless it was submitted with --hotfix off — enforces
its --disk quota, and records what perception saw (labmate job status shows it).`,
	}
	cmd.AddCommand(newJobSubmitCmd(), newJobStatusCmd(), newJobLogsCmd(), newJobCancelCmd(), newJobListCmd(), newJobWaitCmd(), newJobSuperviseCmd())
	return cmd
}

const dataFlagHelp = "data directory DATA holding the jobs (default $XDG_DATA_HOME/labmate or ~/.local/share/labmate)"

// jobDirs finds the job directories of --data.
type jobDirs struct{ data string }

func (d *jobDirs) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&d.data, "data", "", dataFlagHelp)
}

func (d *jobDirs) root() (string, error) { return dataDir(d.data) }

// local opens the local jobs in DATA/jobs: while it is open, queued jobs start.
func (d *jobDirs) local() (*local.Scheduler, error) {
	dir, err := d.root()
	if err != nil {
		return nil, err
	}
	return local.Open(dir, &local.Options{Supervisor: supervisorArgv(dir)})
}

// slurmTools are the Slurm commands the slurm scheduler runs.
var slurmTools = []string{"sbatch", "scontrol", "scancel"}

// slurm opens the Slurm jobs recorded in DATA/slurm; Slurm's commands must be on PATH.
func (d *jobDirs) slurm() (*slurm.Scheduler, error) {
	for _, t := range slurmTools {
		if _, err := exec.LookPath(t); err != nil {
			return nil, fmt.Errorf("--scheduler slurm: %s is not on PATH: run labmate where Slurm's commands are (a login node; "+
				"module load slurm), or use --scheduler local", t)
		}
	}
	dir, err := d.root()
	if err != nil {
		return nil, err
	}
	return slurm.New(filepath.Join(dir, "slurm"), nil)
}

// slurmUsed says whether a job was ever submitted to Slurm from DATA.
func (d *jobDirs) slurmUsed() bool {
	dir, err := d.root()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "slurm"))
	return err == nil
}

// open opens the scheduler of kind ("local" or "slurm"); close releases it.
func (d *jobDirs) open(kind string) (s job.Scheduler, close func(), err error) {
	switch kind {
	case "local":
		l, err := d.local()
		if err != nil {
			return nil, nil, err
		}
		return l, func() { l.Close() }, nil
	case "slurm":
		s, err := d.slurm()
		if err != nil {
			return nil, nil, err
		}
		return s, func() {}, nil
	}
	return nil, nil, fmt.Errorf("--scheduler %q: choose local or slurm", kind)
}

// forID opens the scheduler that holds id, by its prefix.
func (d *jobDirs) forID(id string) (job.Scheduler, func(), error) {
	kind := job.Kind(job.ID(id))
	if kind != "local" && kind != "slurm" {
		return nil, nil, fmt.Errorf("%w: %q: job ids start with local- or slurm- (labmate job list shows them)", job.ErrUnknownJob, id)
	}
	return d.open(kind)
}

// status opens the scheduler that holds job id and reads the job's status; close releases the
// scheduler. An unknown job's error says where labmate looked (unknownJob).
func (d *jobDirs) status(ctx context.Context, id string) (s job.Scheduler, st *job.Status, close func(), err error) {
	s, close, err = d.forID(id)
	if err != nil {
		return nil, nil, nil, err
	}
	if st, err = s.Status(ctx, job.ID(id)); err != nil {
		close()
		return nil, nil, nil, d.unknownJob(err)
	}
	return s, st, close, nil
}

// all opens every scheduler with jobs here: local, and Slurm once a job went to it (with a
// warning on stderr when its commands are missing).
func (d *jobDirs) all(cmd *cobra.Command) (job.Schedulers, func(), error) {
	l, err := d.local()
	if err != nil {
		return nil, nil, err
	}
	m := job.Schedulers{"local": l}
	if d.slurmUsed() {
		s, err := d.slurm()
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "labmate: Slurm jobs not shown: %v\n", err)
		} else {
			m["slurm"] = s
		}
	}
	return m, func() { l.Close() }, nil
}

// serving opens the schedulers labmate serve and labmate mcp hold while they run (so that
// queued local jobs start): local, and Slurm when its commands are on PATH. Where local jobs
// cannot run (no sandbox), it says so on stderr and the server goes on without job tools.
func (d *jobDirs) serving(cmd *cobra.Command, who string) (job.Schedulers, func()) {
	l, err := d.local()
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "labmate %s: no job tools: %v\n", who, err)
		return nil, func() {}
	}
	m := job.Schedulers{"local": l}
	if s, err := d.slurm(); err == nil {
		m["slurm"] = s
	}
	return m, func() { l.Close() }
}

// unknownJob says where labmate looked for a job it does not know.
func (d *jobDirs) unknownJob(err error) error {
	if !errors.Is(err, job.ErrUnknownJob) {
		return err
	}
	dir, _ := d.root()
	return fmt.Errorf("%w (in %s; labmate job list shows the jobs there, --data names another directory)", err, dir)
}
