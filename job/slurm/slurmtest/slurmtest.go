// Package slurmtest runs a real one-node Slurm cluster on localhost for tests: its own munged
// (own key and socket), slurmctld and slurmd, configured in a temporary directory and on free
// ports, so that it touches neither /etc/slurm nor a cluster the machine may already run.
// It needs root (slurmd runs jobs as any user and manages their cgroups) and Debian's
// slurm-wlm and munge packages, which scripts/deps installs.
//
// Memory: where the cgroup v1 memory controller is mounted (/sys/fs/cgroup/memory), jobs run
// under proctrack/cgroup and task/cgroup with ConstrainRAMSpace, so --mem is a hard limit the
// kernel's OOM killer enforces (the job ends OUT_OF_MEMORY). Elsewhere the cluster falls back
// to jobacct_gather/linux with OverMemoryKill, which samples each second and kills a job over
// its --mem; Cluster.Memory says which.
package slurmtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Cluster is a running one-node cluster.
type Cluster struct {
	Dir  string   // its configuration, state, spool and logs
	Conf string   // its slurm.conf
	Env  []string // SLURM_CONF=…, for the Slurm commands
	// Memory names what enforces --mem: "task/cgroup (cgroup v1)" or
	// "jobacct_gather/linux OverMemoryKill (sampled)".
	Memory string
	CPUs   int // the node's CPUs as configured (oversubscribing the machine's)

	procs []*proc
}

type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when it exited
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// nodeCPUs and nodeMemMiB are what the node offers the scheduler. Test jobs mostly sleep, so
// the node declares more CPUs than a small machine has (SlurmdParameters=config_overrides).
const (
	nodeCPUs   = 8
	nodeMemMiB = 8192
)

// Available says why a cluster cannot be started here, or nil. errNotRoot is the one reason
// a test may skip for.
func Available() error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	for _, bin := range []string{"munged", "slurmctld", "slurmd", "sbatch", "scontrol", "squeue", "scancel", "sinfo"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("slurmtest: %s is not installed: run scripts/deps (it installs slurm-wlm and munge)", bin)
		}
	}
	return nil
}

// ErrNotRoot: the daemons need root.
var ErrNotRoot = errors.New("slurmtest: a Slurm cluster on localhost needs root (munged, slurmctld and slurmd run as root); run the tests as root, as CI does")

// Start starts a cluster for one test and stops it when the test ends. Not root: the test is
// skipped, saying so; Slurm missing or not coming up: the test fails (with the daemons' logs).
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	if err := Available(); err != nil {
		if errors.Is(err, ErrNotRoot) {
			tb.Skip(err)
		}
		tb.Fatal(err)
	}
	c, err := New(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Stop() })
	return c
}

var shared struct {
	once sync.Once
	c    *Cluster
	dir  string
	err  error
}

// Shared returns one cluster for every test of the binary, started on first use; Main stops
// it. Not root: the test is skipped; otherwise a cluster that cannot start fails the test.
func Shared(tb testing.TB) *Cluster {
	tb.Helper()
	shared.once.Do(func() {
		if shared.err = Available(); shared.err != nil {
			return
		}
		shared.dir, shared.err = os.MkdirTemp("", "slurmtest-")
		if shared.err == nil {
			shared.c, shared.err = New(shared.dir)
		}
	})
	if shared.err != nil {
		if errors.Is(shared.err, ErrNotRoot) {
			tb.Skip(shared.err)
		}
		tb.Fatal(shared.err)
	}
	return shared.c
}

// Main runs m's tests and stops the shared cluster after them: call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared.c != nil {
		shared.c.Stop()
	}
	if shared.dir != "" && code == 0 {
		os.RemoveAll(shared.dir)
	} else if shared.dir != "" {
		fmt.Fprintf(os.Stderr, "slurmtest: the cluster's files are kept in %s\n", shared.dir)
	}
	os.Exit(code)
}

// New writes the configuration under dir and starts munged, slurmctld and slurmd, returning
// once the node is idle. On failure everything started is stopped and the error holds the
// daemons' logs.
func New(dir string) (*Cluster, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf"), CPUs: nodeCPUs}
	c.Env = []string{"SLURM_CONF=" + c.Conf}
	for _, d := range []string{"munge", "state", "spool", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := c.configure(); err != nil {
		return nil, err
	}
	if err := c.start(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("%w\n%s", err, c.Logs())
	}
	return c, nil
}

func (c *Cluster) configure() error {
	key := make([]byte, 1024)
	rand.Read(key)
	if err := os.WriteFile(filepath.Join(c.Dir, "munge", "munge.key"), key, 0o600); err != nil {
		return err
	}
	ctldPort, err := freePort()
	if err != nil {
		return err
	}
	dPort, err := freePort()
	if err != nil {
		return err
	}
	p := func(parts ...string) string { return filepath.Join(append([]string{c.Dir}, parts...)...) }
	conf := fmt.Sprintf(`# written by labmate's job/slurm/slurmtest: a one-node cluster on localhost
ClusterName=labmatetest
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%s
CredType=cred/munge
StateSaveLocation=%s
SlurmdSpoolDir=%s
SlurmctldPidFile=%s
SlurmdPidFile=%s
SlurmctldLogFile=%s
SlurmdLogFile=%s
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=256
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=300
KillWait=2
SchedulerParameters=sched_min_interval=100000
`, ctldPort, dPort, p("munge", "munge.socket"), p("state"), p("spool"),
		p("slurmctld.pid"), p("slurmd.pid"), p("log", "slurmctld.log"), p("log", "slurmd.log"))
	if fi, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err == nil && !fi.IsDir() {
		c.Memory = "task/cgroup (cgroup v1)"
		conf += "ProctrackType=proctrack/cgroup\nTaskPlugin=task/cgroup\nJobAcctGatherType=jobacct_gather/none\n"
		cg := "CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\nConstrainRAMSpace=yes\nConstrainSwapSpace=yes\nAllowedSwapSpace=0\n"
		if err := os.WriteFile(p("cgroup.conf"), []byte(cg), 0o644); err != nil {
			return err
		}
	} else {
		c.Memory = "jobacct_gather/linux OverMemoryKill (sampled)"
		conf += "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n" +
			"JobAcctGatherType=jobacct_gather/linux\nJobAcctGatherFrequency=task=1\nJobAcctGatherParams=OverMemoryKill\n"
	}
	conf += fmt.Sprintf("NodeName=localhost NodeAddr=127.0.0.1 CPUs=%d RealMemory=%d State=UNKNOWN\n", nodeCPUs, nodeMemMiB)
	conf += "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n"
	return os.WriteFile(c.Conf, []byte(conf), 0o644)
}

func (c *Cluster) start() error {
	m := func(parts ...string) string { return filepath.Join(append([]string{c.Dir, "munge"}, parts...)...) }
	if err := c.daemon("munged", "munged", "-F", "-f", "--socket="+m("munge.socket"), "--key-file="+m("munge.key"),
		"--log-file="+m("munged.log"), "--pid-file="+m("munged.pid"), "--seed-file="+m("munged.seed")); err != nil {
		return err
	}
	if err := waitFor(10*time.Second, func() bool { _, err := os.Stat(m("munge.socket")); return err == nil }); err != nil {
		return errors.New("slurmtest: munged did not create its socket")
	}
	if err := c.daemon("slurmctld", "slurmctld", "-D", "-c", "-i"); err != nil {
		return err
	}
	if err := c.daemon("slurmd", "slurmd", "-D", "-N", "localhost"); err != nil {
		return err
	}
	var state string
	err := waitFor(60*time.Second, func() bool {
		for _, p := range c.procs {
			if p.exited() {
				return true
			}
		}
		out, _ := c.Command(context.Background(), "sinfo", "-h", "-n", "localhost", "-o", "%T").Output()
		state = strings.TrimSpace(string(out))
		return state == "idle"
	})
	for _, p := range c.procs {
		if p.exited() {
			return fmt.Errorf("slurmtest: %s exited: %v", p.name, p.cmd.ProcessState)
		}
	}
	if err != nil {
		return fmt.Errorf("slurmtest: the node did not become idle in 60 s (state %q)", state)
	}
	return nil
}

// daemon starts a daemon in the foreground, its output in log/<name>.out.
func (c *Cluster) daemon(name, bin string, args ...string) error {
	out, err := os.Create(filepath.Join(c.Dir, "log", name+".out"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("slurmtest: starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	c.procs = append(c.procs, p)
	go func() { cmd.Wait(); out.Close(); close(p.done) }()
	return nil
}

// Command is a Slurm command run against this cluster.
func (c *Cluster) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), c.Env...)
	return cmd
}

// Stop cancels the cluster's jobs and stops its daemons (SIGTERM, then SIGKILL after 5 s).
func (c *Cluster) Stop() {
	if len(c.procs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	c.Command(ctx, "scancel", "--full", "--user=root").Run()
	cancel()
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
	c.procs = nil
}

// Logs returns the tails of the daemons' logs.
func (c *Cluster) Logs() string {
	var b bytes.Buffer
	for _, f := range []string{"log/slurmctld.log", "log/slurmd.log", "munge/munged.log",
		"log/munged.out", "log/slurmctld.out", "log/slurmd.out"} {
		data, err := os.ReadFile(filepath.Join(c.Dir, f))
		if err != nil || len(data) == 0 {
			continue
		}
		if len(data) > 3000 {
			data = data[len(data)-3000:]
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", f, data)
	}
	return b.String()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitFor(d time.Duration, ok func() bool) error {
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}
