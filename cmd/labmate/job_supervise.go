package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/local"
	"github.com/labmate/labmate/job/supervise"
)

// newJobSuperviseCmd is the hidden labmate job supervise ID: the process that local jobs start
// beside each job to watch it where it runs (job/supervise). The job's scheduler starts it,
// detached, with the job's supervisor lock as its fd 3; run by hand it takes the lock itself,
// and does nothing when another process holds it.
func newJobSuperviseCmd() *cobra.Command {
	var dirs jobDirs
	cmd := &cobra.Command{
		Use:    "supervise ID",
		Short:  "Watch a local job where it runs, to its end (started by labmate for each job)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := job.ID(args[0])
			if job.Kind(id) != "local" {
				return fmt.Errorf("%w: %q: only local jobs have a supervisor", job.ErrUnknownJob, id)
			}
			dir, err := dirs.root()
			if err != nil {
				return err
			}
			s, err := local.Open(dir, &local.Options{Supervisor: supervisorArgv(dir), Lazy: true})
			if err != nil {
				return err
			}
			defer s.Close()
			sup, err := s.Supervise(id, inheritedLock())
			if errors.Is(err, local.ErrSupervised) {
				fmt.Fprintf(cmd.ErrOrStderr(), "labmate: job %s is supervised by another process already\n", id)
				return nil
			}
			if err != nil {
				return dirs.unknownJob(err)
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			return supervise.Run(ctx, s, sup, &supervise.Options{Log: cmd.ErrOrStderr(),
				Artifacts: dataArtifacts(cmd.ErrOrStderr(), dir, "job supervise")})
		},
	}
	dirs.add(cmd)
	return cmd
}

// inheritedLock is the supervisor lock a scheduler handed to this process as fd 3
// (local.SupervisorFD says so), nil when none was.
func inheritedLock() *os.File {
	if os.Getenv(local.SupervisorFD) != "3" {
		return nil
	}
	os.Unsetenv(local.SupervisorFD)
	var st syscall.Stat_t
	if err := syscall.Fstat(3, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil
	}
	syscall.CloseOnExec(3)
	return os.NewFile(3, "supervisor.lock")
}

// supervisorArgv is the command that supervises a job of DATA dir (the job's id appended):
// this very binary.
func supervisorArgv(dir string) []string {
	exe, err := os.Executable()
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		return nil // jobs then run without a supervisor, as before
	}
	return []string{exe, "job", "supervise", "--data", dir}
}
