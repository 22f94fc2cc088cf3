package local

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/labmate/labmate/internal/procfs"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
)

// The files of a job's supervisor, in DIR/jobs/ID.
const (
	supervisorLock = "supervisor.lock" // flocked by the one process that supervises the job
	supervisorLog  = "supervisor.log"  // the supervisor's stdout and stderr
	verdictsFile   = "verdicts"        // the verdicts it recorded, one JSON object a line
	failMarker     = "fail"            // why the job was stopped as FAILED (Fail): its quota
	maxVerdicts    = 1000              // verdicts recorded per job at most
)

// relaunchEvery is how often a Scheduler starts a supervisor again for a running job that has
// none (its supervisor died, or an older labmate started the job).
const relaunchEvery = 10 * time.Second

// SupervisorFD is the environment variable that tells a supervisor started by a Scheduler
// (Options.Supervisor) that its fd 3 is the job's supervisor lock, taken: its value is "3".
const SupervisorFD = "LABMATE_SUPERVISOR_FD"

// ErrSupervised is returned by Supervise when another process supervises the job.
var ErrSupervised = errors.New("job/local: the job has a supervisor already")

// Supervision is the hold of a job's one supervisor: the flock on DIR/jobs/ID/supervisor.lock.
type Supervision struct {
	ID job.ID
	f  *os.File
}

// Release lets another process supervise the job.
func (v *Supervision) Release() {
	if v.f != nil {
		_ = v.f.Close()
		v.f = nil
	}
}

// Supervise takes the supervision of job id: the flock on its supervisor.lock, held until
// Release or the end of the process. held, when not nil, is that file with the lock taken
// already — what a supervisor started by the Scheduler inherits as its fd 3 (Options.Supervisor)
// — and is checked to be that file. It fails with ErrSupervised when another process holds the
// lock, and with an error wrapping job.ErrUnknownJob for a job there is not.
func (s *Scheduler) Supervise(id job.ID, held *os.File) (*Supervision, error) {
	if _, err := s.readRecord(id); err != nil {
		return nil, err
	}
	path := filepath.Join(s.jobDir(id), supervisorLock)
	if held != nil {
		a, err1 := held.Stat()
		b, err2 := os.Lstat(path)
		if err1 != nil || err2 != nil || !os.SameFile(a, b) {
			held.Close()
			return nil, fmt.Errorf("job/local: %s: the file handed to the supervisor is not %s", id, path)
		}
		// Taking it again on the same open file is a no-op that says it is held there.
		if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			held.Close()
			return nil, fmt.Errorf("job/local: %s: the supervisor's lock: %w", id, err)
		}
		return &Supervision{ID: id, f: held}, nil
	}
	f, err := s.tryLock(id)
	if err != nil {
		return nil, err
	}
	return &Supervision{ID: id, f: f}, nil
}

// tryLock takes id's supervisor lock on a new open file, or fails with ErrSupervised.
func (s *Scheduler) tryLock(id job.ID) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(s.jobDir(id), supervisorLock), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("job/local: %s: %w", id, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrSupervised, id)
		}
		return nil, fmt.Errorf("job/local: %s: the supervisor's lock: %w", id, err)
	}
	return f, nil
}

// Supervised reports whether a process supervises job id now (holds its supervisor lock).
func (s *Scheduler) Supervised(ctx context.Context, id job.ID) bool {
	if !validID(id) {
		return false
	}
	f, err := s.tryLock(id)
	if err != nil {
		return errors.Is(err, ErrSupervised)
	}
	f.Close()
	return false
}

// launch starts the supervisor of running job r (Options.Supervisor with the job's id), detached
// in a session of its own with no parent-death signal, holding the job's supervisor lock from
// here on (its fd 3): so the job is supervised before anyone could look, and a labmate that then
// opens the job does not judge it a second time. Nothing when another process supervises it.
func (s *Scheduler) launch(r *record) {
	if len(s.supervisor) == 0 {
		return
	}
	s.mu.Lock()
	last := s.launched[r.ID]
	if time.Since(last) < relaunchEvery {
		s.mu.Unlock()
		return
	}
	s.launched[r.ID] = time.Now()
	s.mu.Unlock()
	lock, err := s.tryLock(r.ID)
	if err != nil {
		return
	}
	defer lock.Close() // the child's copy holds the lock
	out, err := os.OpenFile(filepath.Join(s.jobDir(r.ID), supervisorLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return
	}
	defer out.Close()
	cmd := exec.Command(s.supervisor[0], append(s.supervisor[1:], string(r.ID))...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{lock}
	cmd.Env = append(os.Environ(), SupervisorFD+"=3")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(out, "labmate: starting the supervisor of %s: %v\n", r.ID, err)
		return
	}
	go func() { _ = cmd.Wait() }() // reaped while this process lives; init reaps it after
}

// relaunch starts a supervisor for running job r when it has none; the caller holds the lock.
func (s *Scheduler) relaunch(r *record) {
	if len(s.supervisor) == 0 || r.PID <= 0 || !s.alive(r) || exists(filepath.Join(s.jobDir(r.ID), "exit")) {
		return
	}
	s.launch(r)
}

// RecordVerdict records v, a verdict of perception on job id, beside the job (its status then
// carries the last one). Normal verdicts, and more than a thousand, are not recorded.
func (s *Scheduler) RecordVerdict(id job.ID, v *protocol.Verdict) error {
	if v == nil || v.State == protocol.Normal {
		return nil
	}
	if _, err := s.readRecord(id); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("job/local: %s: verdict: %w", id, err)
	}
	f, err := os.OpenFile(filepath.Join(s.jobDir(id), verdictsFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("job/local: %s: %w", id, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxVerdicts*int64(len(b)+1) {
		return nil
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("job/local: %s: recording a verdict: %w", id, err)
	}
	return f.Sync()
}

// Verdicts returns the verdicts recorded for job id (RecordVerdict), oldest first. A torn last
// line (its supervisor killed while writing it) is left out.
func (s *Scheduler) Verdicts(ctx context.Context, id job.ID) ([]*protocol.Verdict, error) {
	f, err := s.openRecorded(id, verdictsFile)
	if f == nil {
		return nil, err
	}
	defer f.Close()
	var out []*protocol.Verdict
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		v := &protocol.Verdict{}
		if json.Unmarshal(sc.Bytes(), v) == nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// lastVerdict is the last verdict recorded for id, nil when none was.
func (s *Scheduler) lastVerdict(id job.ID) *protocol.Verdict {
	if fi, err := os.Lstat(filepath.Join(s.jobDir(id), verdictsFile)); err != nil || fi.Size() == 0 {
		return nil
	}
	vs, err := s.Verdicts(context.Background(), id)
	if err != nil || len(vs) == 0 {
		return nil
	}
	return vs[len(vs)-1]
}

// Fail stops running job id as Cancel does, but records it FAILED with why as the reason: a
// limit it broke (its workspace quota), not someone's choice. A job that is already being
// stopped, or has ended, is left alone.
func (s *Scheduler) Fail(ctx context.Context, id job.ID, why string) error {
	if _, err := s.readRecord(id); err != nil {
		return err
	}
	unlock := s.lock()
	defer unlock()
	r, err := s.readRecord(id)
	if err != nil {
		return err
	}
	if err := s.settle(r); err != nil {
		return err
	}
	dir := s.jobDir(id)
	if r.State != job.Running || exists(filepath.Join(dir, "cancel")) || exists(filepath.Join(dir, failMarker)) {
		return nil
	}
	if err := writeAtomic(filepath.Join(dir, failMarker), why); err != nil {
		return err
	}
	s.stopRecorder(r)
	return nil
}

// stopRecorder asks r's recorder to stop the job (SIGTERM), and kills it with its process group
// when it has not ended 10 s later.
func (s *Scheduler) stopRecorder(r *record) {
	if s.alive(r) {
		_ = syscall.Kill(r.PID, syscall.SIGTERM) // the recorder stops the job and records it
		pid, start := r.PID, r.Start
		time.AfterFunc(10*time.Second, func() {
			if st, ok := procfs.ReadStat(pid); ok && st.Start == start && st.State != 'Z' {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		})
	}
	s.kick()
}

// Quota is running job id's workspace quota for its supervisor to enforce
// (sandbox.WatchQuota, with Breach to set), nil when the job asked for none.
func (s *Scheduler) Quota(id job.ID) (*sandbox.QuotaWatch, error) {
	r, err := s.readRecord(id)
	if err != nil {
		return nil, err
	}
	sp, err := s.spec(id)
	if err != nil {
		return nil, err
	}
	if sp.Resources.DiskBytes <= 0 {
		return nil, nil
	}
	if r.State != job.Running || r.Pin == nil {
		return nil, fmt.Errorf("%w: %s is %s", job.ErrNotRunning, id, r.State)
	}
	return &sandbox.QuotaWatch{Workspace: r.Pin.Path, Limit: sp.Resources.DiskBytes, Base: r.DiskBase, Cgroups: r.Cgroups}, nil
}

// Dispatch looks at the jobs once, as an open Scheduler does every Options.Poll: it settles
// the jobs that ended, reads their output, and starts the queued jobs that now fit. A
// supervisor calls it when its job has ended, so that the jobs queued behind it start with no
// labmate open.
func (s *Scheduler) Dispatch() error { return s.dispatch() }
