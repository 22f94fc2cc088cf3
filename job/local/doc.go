// Package local is the embedded job.Scheduler: it runs jobs on this machine, in the kernels'
// sandbox, in the background, durable in a data directory.
//
// # A job on disk
//
// Each job is a directory DIR/jobs/ID holding spec.json (written once), status.json (the
// state, replaced atomically: written beside and renamed, never half written), stdout and
// stderr (the job's own output, appended by the job's processes themselves, never through a
// pipe), log (the numbered log index, below), and the files the job's recorder writes: exit
// ("CODE OOM_KILLS", renamed into place), and the markers cancel (the reason) and timeout.
//
// # Surviving labmate
//
// A job runs under a recorder: a small /bin/sh, started in a session of its own and not tied
// to labmate's life (no parent-death signal), which runs the sandboxed command (the same
// sandbox.Sandbox as kernels, one cgroup budget for the tree: the job's memory → MemoryBytes,
// its cores → CPUs) as its child, waits for it and records its exit code, with how many
// processes the cgroup's OOM killer ended, in DIR/jobs/ID/exit (whoever settles the job then
// removes its emptied cgroups). The recorder forks nothing but mv(1), and sleep(1) for a wall
// time. It also enforces the wall time (it writes the timeout marker and stops the
// job) and stops the job on SIGTERM (Cancel writes the cancel marker first). So a job ends
// properly, and says how, while no labmate runs at all.
//
// # Supervised where it runs
//
// With Options.Supervisor (labmate's own hidden labmate job supervise), each job gets a
// supervisor as it starts: a process in a session of its own, outside the job's sandbox and
// cgroup, not tied to labmate's life either, that runs the job's perception and Hot-Fix and its
// workspace quota from the job's start to its end whether or not any labmate runs
// (job/supervise). It holds the job's supervisor lock (an flock on DIR/jobs/ID/supervisor.lock)
// from before it is started — the starting process takes it and hands it over as fd 3 — so a
// job has one supervisor, and a labmate that follows the job (labmate job wait) reads the
// verdicts the supervisor records (DIR/jobs/ID/verdicts; the last one is in the job's status)
// rather than judging the job a second time. A supervisor that died (kill -9) is started again
// by the next Scheduler that looks at the running job, any labmate command on the directory.
// Its output is DIR/jobs/ID/supervisor.log. Every job has a workspace quota unless it asks for
// none (Resources.DiskBytes job.NoDiskQuota, labmate job submit --disk 0): one that asks for no
// particular quota gets Options.DefaultDiskBytes (DefaultDiskBytes, 10 GiB, as a kernel), and
// the spec records the quota in force, which labmate job status shows. The quota counts from
// the workspace's size when the job started, each inode charged sandbox.InodeBytes on top of
// its blocks (300 000 empty files are not free); past it the supervisor stops the job, which
// ends FAILED with the quota in its reason (Fail). When its job has ended the supervisor starts the
// jobs queued behind it.
//
// [Open] on the same directory reattaches every running job by its recorder's pid and start
// time (/proc/PID/stat field 22, with the boot id): a pid reused by another process is not the
// job. A running job whose exit record exists is finished; one whose recorder is gone without an
// exit record is LOST, its last log line in the reason.
//
// # What the job's code controls
//
// A job's command and environment are a request's, and its workspace is writable by code
// (the job's own, and a kernel's sharing it): labmate's host side trusts neither. The spec's
// environment is exported inside the sandbox by a preamble, the job's first instruction; the
// recorder, the sandbox's wrapper shell and bwrap run with labmate's own variables only, so a
// job's LD_PRELOAD (refused at Submit anyway, with every name sandbox.RefusedEnv names) could
// never load into a host process. The workspace is pinned at Submit: its path, which must hold
// no symbolic link (the caller resolves and checks it once; a path through a link is refused,
// not resolved again), opened with RESOLVE_NO_SYMLINKS, its device and inode kept in
// status.json. At start it is opened again without following any
// symbolic link (openat2 RESOLVE_NO_SYMLINKS) and must be the same directory, or the job
// fails saying so; the preamble checks the directory mounted in the sandbox once more, and
// runs nothing (exit 125) if it is not that one. labmate makes .labmate in the workspace
// before the job starts, so the sandbox mounts it read-only. Followed files are read through
// an os.Root on the pinned directory, regular files only.
//
// # Queue
//
// A job holds its cores (default 1) and memory (default Options.DefaultMemoryBytes) while it
// runs. Queued jobs start in submission order while what they ask for fits in the machine's
// cores and memory (Options.Cores, Options.MemoryBytes) beside the running jobs; the first that
// does not fit waits, with a reason that says what is taken, and the jobs behind it wait for
// it. Queued jobs start only while a Scheduler on the directory is open (labmate serve, a
// command that waits, a running job's supervisor, which also dispatches as its job ends): Open
// and Submit dispatch at once, and an open Scheduler looks again every Options.Poll. Several Schedulers, in one process or several, may share a directory: every
// change of state holds an flock on DIR/jobs/.lock.
//
// # Logs
//
// A job's log is its stdout, its stderr and its followed files (Spec.Follow, opened inside the
// workspace: a symlink cannot lead out of it), read line by line from the files and numbered
// 1, 2, … in the order read. The numbering is durable: every line read is appended, as one JSON
// record with its stream, text, time and the offset it ends at in its stream, to DIR/jobs/ID/log,
// under an flock, so that after= means the same lines in every process and after any restart
// (job/joblog keeps it, as it does job/slurm's). The log is bounded (Options.MaxLogBytes,
// joblog.DefaultMaxBytes): past it, its last line says it was cut, and the output goes on in
// stdout, stderr and the followed files only. An open Scheduler reads its running jobs' files every Options.Poll, which keeps lines of
// different streams in the order they were written to that precision; a job's unfinished last
// line is read when the job has ended.
//
// # Rough edges
//
//   - An exit status above 128 is read as death by signal 128+N, as shells do: a job that runs
//     `exit 137` is reported killed by SIGKILL.
//   - A job's workspace quota is its supervisor's watchdog (sandbox.WatchQuota): a job whose
//     supervisor was killed runs without one until a Scheduler starts a new supervisor; and a
//     job started without a supervisor (no Options.Supervisor) cannot ask for a quota.
//   - A labmate serve that adopts a job watches it with its own perception too, to log it; both
//     may cancel it on the same verdict, and the first reason written stands.
//   - A job is recorded as starting before its recorder starts: if labmate dies before the
//     recorder's pid is recorded (microseconds later), the job is marked LOST, though it may
//     still run — never started twice.
//   - status.json and spec.json are fsynced before the rename (≈1.5 ms each here); the log
//     index is not, and a torn last record is cut off when it is next read.
//   - One poll reads at most joblog.MaxPass (4 MiB) of each stream, so that it holds the lock
//     briefly: a job writing faster than that per poll is read late, and fully once it ends.
package local
