package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labmate/labmate/internal/procfs"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/job/joblog"
	"github.com/labmate/labmate/sandbox"
)

// DefaultDiskBytes is the workspace quota of a job that asks for none, as a kernel's: how much
// its workspace may grow while it runs (Options.DefaultDiskBytes sets another).
const DefaultDiskBytes = sandbox.DefaultDiskBytes

// Options tune a Scheduler; nil means defaults.
type Options struct {
	// Mode is the sandbox mode jobs run in; "" means sandbox.Detect's choice, and ModeNone is
	// used only when asked for.
	Mode sandbox.Mode
	// Policy is the sandbox policy jobs start from (network, processes, hidden paths); each job's
	// memory and cores replace MemoryBytes and CPUs. The data directory is always hidden.
	Policy *sandbox.Policy
	// Cores and MemoryBytes are what the queue hands out: 0 means the machine's cores and its
	// physical memory.
	Cores       int
	MemoryBytes int64
	// DefaultMemoryBytes is the memory of a job that asks for none: 0 means
	// sandbox.DefaultMemoryBytes, at most half of MemoryBytes.
	DefaultMemoryBytes int64
	// DefaultDiskBytes is the workspace quota of a job that asks for none (Resources.DiskBytes
	// 0): 0 means DefaultDiskBytes, below 0 none. It needs a Supervisor; without one jobs get no
	// default quota.
	DefaultDiskBytes int64
	// Poll is how often an open Scheduler looks at its jobs, starts queued ones and reads their
	// output (default 100 ms).
	Poll time.Duration
	// Supervisor is the command (an argv; the job's id is appended) that supervises a job where
	// it runs, from its start to its end, whether or not labmate runs: labmate's own hidden
	// labmate job supervise. It is started for every job this Scheduler starts, and again for a
	// running job whose supervisor is gone; it inherits the job's supervisor lock as its fd 3
	// (Supervise). Nil: jobs run without one, and a workspace quota (Resources.DiskBytes) is
	// refused.
	Supervisor []string
	// Lazy makes no sandbox before a job needs one (by default Open finds the sandbox mode
	// that works here and readies a sandbox for the usual job): for a process that mostly
	// watches, such as a supervisor.
	Lazy bool
	// MaxLogBytes bounds each job's log (DIR/jobs/ID/log): 0 means joblog.DefaultMaxBytes.
	MaxLogBytes int64
}

// Scheduler runs jobs on this machine; see the package documentation. It is safe for concurrent
// use.
type Scheduler struct {
	dir     string       // DIR/jobs
	hidden  string       // DIR
	mode    sandbox.Mode // "" until detected (Options.Lazy)
	modeMu  sync.Mutex
	base    sandbox.Policy
	cores   int
	mem     int64
	defMem  int64
	defDisk int64 // the quota of a job that asks for none; 0: none
	poll    time.Duration
	boot    string
	tools   map[string]string // absolute paths of the recorder's tools

	supervisor []string
	launched   map[job.ID]time.Time // when this process last started a job's supervisor

	lockMu   sync.Mutex
	lockFile *os.File

	mu       sync.Mutex
	boxes    map[boxKey]*sandbox.Sandbox
	specs    map[job.ID]*job.Spec
	logs     *joblog.Cache
	terminal map[job.ID]bool // jobs known to have ended
	changed  chan struct{}   // closed at every change of state this process makes or sees

	wake     chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

type boxKey struct {
	cores int
	mem   int64
}

// record is status.json: the status without the spec, and what reattaching needs.
type record struct {
	job.Status
	Cores  int   `json:"cores"`
	Memory int64 `json:"memory_bytes"`
	// PID and Start identify the recorder: its pid and start time in clock ticks since boot
	// (/proc/PID/stat), on the boot Boot.
	PID     int             `json:"pid,omitempty"`
	Start   uint64          `json:"start_ticks,omitempty"`
	Boot    string          `json:"boot_id,omitempty"`
	Cgroups sandbox.Cgroups `json:"cgroups,omitzero"`
	// Pin is the workspace as Submit found it, which start and the followed files' reads
	// insist on (nil in a record of an older labmate: pinned when the job starts).
	Pin *pin `json:"workspace_pin,omitempty"`
	// DiskBase is the disk space the workspace took when the job started, from which its quota
	// counts (Resources.DiskBytes); -1: too big to measure then, measured by the supervisor.
	DiskBase int64 `json:"disk_base_bytes,omitempty"`
}

// Open opens (creating it if need be) the job directory DIR/jobs, reattaches the jobs that run,
// settles those that ended while nobody watched, starts what the queue allows, and keeps doing
// so until Close.
func Open(dir string, opts *Options) (*Scheduler, error) {
	if opts == nil {
		opts = &Options{}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("job/local: %w", err)
	}
	s := &Scheduler{
		dir:      filepath.Join(abs, "jobs"),
		hidden:   abs,
		mode:     opts.Mode,
		cores:    opts.Cores,
		mem:      opts.MemoryBytes,
		defMem:   opts.DefaultMemoryBytes,
		defDisk:  opts.DefaultDiskBytes,
		poll:     opts.Poll,
		boxes:    map[boxKey]*sandbox.Sandbox{},
		specs:    map[job.ID]*job.Spec{},
		logs:     joblog.NewCache(&joblog.Options{Log: logName, MaxBytes: opts.MaxLogBytes}),
		terminal: map[job.ID]bool{},
		changed:  make(chan struct{}),
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		tools:    map[string]string{},
		launched: map[job.ID]time.Time{},
	}
	s.supervisor = slices.Clone(opts.Supervisor)
	if opts.Policy != nil {
		s.base = *opts.Policy
		s.base.Hide = slices.Clone(opts.Policy.Hide)
	}
	s.base.Hide = append(s.base.Hide, abs)
	if s.mode == "" && !opts.Lazy {
		if s.mode, err = sandbox.Detect(); err != nil {
			return nil, fmt.Errorf("job/local: %w", err)
		}
	}
	if s.cores <= 0 {
		s.cores = runtime.NumCPU()
	}
	if s.mem <= 0 {
		if s.mem, err = sandbox.HostMemory(); err != nil {
			return nil, fmt.Errorf("job/local: %w", err)
		}
	}
	switch {
	case s.defDisk == 0:
		s.defDisk = DefaultDiskBytes
	case s.defDisk < 0:
		s.defDisk = 0
	}
	if len(s.supervisor) == 0 {
		s.defDisk = 0
	}
	if s.defMem <= 0 {
		s.defMem = min(sandbox.DefaultMemoryBytes, s.mem/2)
	}
	if s.poll <= 0 {
		s.poll = 100 * time.Millisecond
	}
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		s.boot = strings.TrimSpace(string(b))
	}
	for _, t := range []string{"sleep", "mv"} {
		p, err := lookTool(t)
		if err != nil {
			return nil, fmt.Errorf("job/local: the job recorder needs %s: %w", t, err)
		}
		s.tools[t] = p
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("job/local: %w", err)
	}
	if s.lockFile, err = os.OpenFile(filepath.Join(s.dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("job/local: %w", err)
	}
	if err := s.dispatch(); err != nil {
		s.lockFile.Close()
		return nil, err
	}
	go s.loop()
	if !opts.Lazy {
		go s.box(1, s.defMem) // a new sandbox takes a while (≈0.5 s here): ready one for the usual job
	}
	return s, nil
}

func lookTool(name string) (string, error) {
	for _, d := range []string{"/usr/bin", "/bin"} {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is in neither /usr/bin nor /bin", name)
}

// Close stops looking after the jobs; they keep running and another Open finds them.
func (s *Scheduler) Close() error {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
	return nil
}

func (s *Scheduler) closed() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

func (s *Scheduler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.poll)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.wake:
		}
		_ = s.dispatch()
	}
}

func (s *Scheduler) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// notify wakes the watchers of this process.
func (s *Scheduler) notify() {
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

func (s *Scheduler) changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// lock takes the directory's lock, against this process's goroutines and other processes.
func (s *Scheduler) lock() func() {
	s.lockMu.Lock()
	for {
		err := syscall.Flock(int(s.lockFile.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	return func() {
		_ = syscall.Flock(int(s.lockFile.Fd()), syscall.LOCK_UN)
		s.lockMu.Unlock()
	}
}

func (s *Scheduler) jobDir(id job.ID) string { return filepath.Join(s.dir, string(id)) }

// validID keeps ids to what Submit makes, so that an id never names a path elsewhere.
func validID(id job.ID) bool {
	rest, ok := strings.CutPrefix(string(id), "local-")
	return ok && rest != "" && !strings.ContainsAny(rest, "/\\.") && len(rest) < 100
}

func unknown(id job.ID) error { return fmt.Errorf("%w: %s", job.ErrUnknownJob, id) }

func (s *Scheduler) readRecord(id job.ID) (*record, error) {
	if !validID(id) {
		return nil, unknown(id)
	}
	b, err := os.ReadFile(filepath.Join(s.jobDir(id), "status.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, unknown(id)
	}
	if err != nil {
		return nil, fmt.Errorf("job/local: %s: %w", id, err)
	}
	r := &record{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("job/local: %s: status.json: %w", id, err)
	}
	return r, nil
}

// writeRecord replaces status.json atomically; the caller holds the lock.
func (s *Scheduler) writeRecord(r *record) error {
	r.Spec = nil
	if err := writeAtomic(filepath.Join(s.jobDir(r.ID), "status.json"), r); err != nil {
		return err
	}
	if r.State.Terminal() {
		s.mu.Lock()
		s.terminal[r.ID] = true
		s.mu.Unlock()
	}
	s.notify()
	return nil
}

// writeAtomic writes v as JSON (or a string as is) to a file beside path and renames it to path.
func writeAtomic(path string, v any) error {
	var b []byte
	switch v := v.(type) {
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.MarshalIndent(v, "", "  "); err != nil {
			return err
		}
		b = append(b, '\n')
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("job/local: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("job/local: writing %s: %w", path, err)
	}
	return nil
}

func (s *Scheduler) spec(id job.ID) (*job.Spec, error) {
	s.mu.Lock()
	sp := s.specs[id]
	s.mu.Unlock()
	if sp != nil {
		return sp, nil
	}
	b, err := os.ReadFile(filepath.Join(s.jobDir(id), "spec.json"))
	if err != nil {
		return nil, fmt.Errorf("job/local: %s: %w", id, err)
	}
	sp = &job.Spec{}
	if err := json.Unmarshal(b, sp); err != nil {
		return nil, fmt.Errorf("job/local: %s: spec.json: %w", id, err)
	}
	s.mu.Lock()
	s.specs[id] = sp
	s.mu.Unlock()
	return sp, nil
}

// status is the caller's copy of r with its spec.
func (s *Scheduler) status(r *record) *job.Status {
	st := r.Status
	if sp, err := s.spec(r.ID); err == nil {
		c := *sp
		st.Spec = &c
	}
	st.Verdict = s.lastVerdict(r.ID)
	return &st
}

// Submit validates spec, records it and starts it when the queue allows (at once if it can).
func (s *Scheduler) Submit(ctx context.Context, spec *job.Spec) (job.ID, error) {
	if spec == nil {
		return "", errors.New("job spec: missing")
	}
	if err := spec.Validate(); err != nil {
		return "", err
	}
	r := spec.Resources
	switch {
	case r.Cores > s.cores:
		return "", fmt.Errorf("job spec: resources.cores: %d is more than the %d this machine gives jobs", r.Cores, s.cores)
	case r.MemoryBytes > s.mem:
		return "", fmt.Errorf("job spec: resources.memory_bytes: %s is more than the %s this machine gives jobs", sandbox.FormatSize(r.MemoryBytes), sandbox.FormatSize(s.mem))
	case r.MemoryBytes > 0 && r.MemoryBytes < sandbox.MinMemoryBytes:
		return "", fmt.Errorf("job spec: resources.memory_bytes: %s is less than the %s a sandbox needs", sandbox.FormatSize(r.MemoryBytes), sandbox.FormatSize(sandbox.MinMemoryBytes))
	case r.GPUs > 0:
		return "", fmt.Errorf("job spec: resources.gpus: %d asked for, local jobs get none", r.GPUs)
	case r.Partition != "":
		return "", fmt.Errorf("job spec: resources.partition: %q is for Slurm; local jobs have none", r.Partition)
	case r.DiskBytes > 0 && r.DiskBytes < 1<<20:
		return "", fmt.Errorf("job spec: resources.disk_bytes: %s is less than the 1 MiB a workspace quota needs", sandbox.FormatSize(r.DiskBytes))
	case r.DiskBytes > 0 && len(s.supervisor) == 0:
		return "", errors.New("job spec: resources.disk_bytes: this scheduler starts no supervisor (Options.Supervisor) to enforce a workspace quota")
	}
	for k := range spec.Env {
		if !isIdentifier(k) {
			return "", fmt.Errorf("job spec: env: %q is not a shell identifier", k)
		}
	}
	if err := checkUserEnv(spec.Env); err != nil {
		return "", fmt.Errorf("job spec: %w", err)
	}
	if fi, err := os.Stat(spec.Workspace); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return "", fmt.Errorf("job spec: workspace: %w", err)
	}
	pinned, err := pinWorkspace(spec.Workspace)
	if err != nil {
		return "", fmt.Errorf("job spec: workspace: %w", err)
	}
	sp := *spec
	if sp.Resources.DiskBytes == 0 && s.defDisk > 0 {
		sp.Resources.DiskBytes = s.defDisk // recorded: job status shows the quota in force
	}
	sp.Command = slices.Clone(spec.Command)
	sp.Follow = slices.Clone(spec.Follow)
	if spec.Env != nil {
		sp.Env = make(map[string]string, len(spec.Env))
		for k, v := range spec.Env {
			sp.Env[k] = v
		}
	}
	id := newID()
	if err := os.Mkdir(s.jobDir(id), 0o700); err != nil {
		return "", fmt.Errorf("job/local: %w", err)
	}
	if err := writeAtomic(filepath.Join(s.jobDir(id), "spec.json"), &sp); err != nil {
		return "", err
	}
	s.mu.Lock()
	s.specs[id] = &sp
	s.mu.Unlock()
	rec := &record{
		Status: job.Status{ID: id, Name: sp.Name, State: job.Queued, Reason: "waiting to be started", Submitted: time.Now().UTC()},
		Cores:  max(1, r.Cores),
		Memory: s.defMem,
		Pin:    pinned,
	}
	if r.MemoryBytes > 0 {
		rec.Memory = r.MemoryBytes
	}
	unlock := s.lock()
	err = s.writeRecord(rec)
	unlock()
	if err != nil {
		return "", err
	}
	if err := s.dispatch(); err != nil {
		return id, err
	}
	return id, nil
}

// checkUserEnv refuses the variables that change how programs load (sandbox.CheckUserEnv); a
// test replaces it to show that such a variable, let through, still reaches no host process.
var checkUserEnv = sandbox.CheckUserEnv

func newID() job.ID {
	var b [4]byte
	_, _ = rand.Read(b[:])
	now := time.Now().UTC()
	return job.ID(fmt.Sprintf("local-%s-%06d-%s", now.Format("20060102-150405"), now.Nanosecond()/1000, hex.EncodeToString(b[:])))
}

func isIdentifier(s string) bool {
	for i, c := range s {
		if c != '_' && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') && (i == 0 || !('0' <= c && c <= '9')) {
			return false
		}
	}
	return s != ""
}

// Status returns the job's status, settling a job that ended or vanished.
func (s *Scheduler) Status(ctx context.Context, id job.ID) (*job.Status, error) {
	r, err := s.current(id)
	if err != nil {
		return nil, err
	}
	return s.status(r), nil
}

// current reads id's record and, when it runs but may have ended, settles it under the lock.
func (s *Scheduler) current(id job.ID) (*record, error) {
	r, err := s.readRecord(id)
	if err != nil || r.State != job.Running {
		return r, err
	}
	if s.alive(r) && !exists(filepath.Join(s.jobDir(id), "exit")) {
		return r, nil
	}
	unlock := s.lock()
	defer unlock()
	if r, err = s.readRecord(id); err != nil {
		return nil, err
	}
	return r, s.settle(r)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// alive reports whether r's recorder still runs: the same pid, started at the same time, on
// this boot.
func (s *Scheduler) alive(r *record) bool {
	if r.PID <= 0 || r.Boot != s.boot {
		return false
	}
	st, ok := procfs.ReadStat(r.PID)
	return ok && st.State != 'Z' && st.State != 'X' && st.Start == r.Start
}

// List returns every job, oldest first.
func (s *Scheduler) List(ctx context.Context) ([]*job.Status, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("job/local: %w", err)
	}
	var out []*job.Status
	for _, e := range entries {
		id := job.ID(e.Name())
		if !e.IsDir() || !validID(id) {
			continue
		}
		r, err := s.current(id)
		if errors.Is(err, job.ErrUnknownJob) {
			continue // being submitted
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s.status(r))
	}
	slices.SortStableFunc(out, func(a, b *job.Status) int { return a.Submitted.Compare(b.Submitted) })
	return out, nil
}

// Cancel stops a queued or running job with the reason why.
func (s *Scheduler) Cancel(ctx context.Context, id job.ID, why string) error {
	if why == "" {
		why = "cancelled"
	}
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
	switch r.State {
	case job.Queued:
		r.State, r.Reason, r.Ended = job.Cancelled, why, time.Now().UTC()
		return s.writeRecord(r)
	case job.Running:
		// Being stopped already (by its supervisor's perception, or its quota): the first
		// reason stands.
		if exists(filepath.Join(s.jobDir(id), "cancel")) || exists(filepath.Join(s.jobDir(id), failMarker)) {
			s.stopRecorder(r)
			return nil
		}
		if err := writeAtomic(filepath.Join(s.jobDir(id), "cancel"), why); err != nil {
			return err
		}
		s.stopRecorder(r)
	}
	return nil
}

// Watch yields the job's status now and at each change of state, until a terminal one.
func (s *Scheduler) Watch(ctx context.Context, id job.ID) iter.Seq2[*job.Status, error] {
	return func(yield func(*job.Status, error) bool) {
		st, err := s.Status(ctx, id)
		if err != nil {
			yield(nil, err)
			return
		}
		if !yield(st, nil) {
			return
		}
		t := time.NewTimer(s.poll)
		defer t.Stop()
		for last := st.State; !last.Terminal(); {
			ch := s.changes()
			t.Reset(s.poll)
			select {
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			case <-ch:
			case <-t.C:
			}
			if st, err = s.Status(ctx, id); err != nil {
				yield(nil, err)
				return
			}
			if st.State != last {
				last = st.State
				if !yield(st, nil) {
					return
				}
			}
		}
	}
}

// Logs yields the job's log lines after seq after; see job.Scheduler.
func (s *Scheduler) Logs(ctx context.Context, id job.ID, after int64, follow bool) iter.Seq2[*job.Line, error] {
	return func(yield func(*job.Line, error) bool) {
		rec, err := s.readRecord(id)
		if err != nil {
			yield(nil, err)
			return
		}
		x, err := s.logIndex(id, rec.Pin)
		if err != nil {
			yield(nil, err)
			return
		}
		// A terminal record is written after the last line is in the log (settle collects it).
		look := func(ctx context.Context) (bool, error) {
			r, err := s.current(id)
			if err != nil {
				return false, err
			}
			if r.State == job.Running {
				if err := s.ingest(r, false); err != nil {
					return false, err
				}
			}
			return r.State.Terminal(), nil
		}
		for l, err := range x.Tail(ctx, after, follow, look, &joblog.TailOptions{Poll: s.poll / 2, Changes: s.changes}) {
			if !yield(l, err) {
				return
			}
		}
	}
}

var _ job.Scheduler = (*Scheduler)(nil)
