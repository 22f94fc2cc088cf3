// Package sandbox is the process isolation used by kernels and jobs: it turns an interpreter's
// argv into an *exec.Cmd that runs with least privilege — no network, only what interpreters
// need of the host, read-only, a writable workspace — under one resource budget for the whole
// process tree, and it finds and kills that tree again. *Sandbox implements kernel.Sandbox.
//
// Three modes exist; [Detect] picks the best one that works on this machine.
//
// [ModeBubblewrap] runs the command under bwrap(1). Least privilege is by construction: the
// sandbox's root is empty but for what is bound into it, read-only — /usr and the merged-/usr
// links, a curated /etc (a private copy of the loader cache, alternatives, fonts, certificates
// and the configuration of Octave, Python, matplotlib and OpenMPI, with a generated passwd,
// group, hosts and nsswitch.conf naming only the sandbox's user and nobody), the font cache, and
// the CPU topology under /sys/devices/system. /root, /home, /run, /var, /srv, /mnt, the cgroup
// filesystem and the rest of /sys are absent, and so are labmate's data directory and other
// workspaces. /proc is the sandbox's own, with /proc/sys, sysrq-trigger, irq, bus, fs, acpi
// replaced by the host's read-only and keys, timer_list and the like masked. The code runs as
// [User] ([UID]) in new user, mount, pid, network, ipc, uts and cgroup namespaces, with every
// capability dropped, no further user namespaces (--disable-userns), no controlling terminal,
// under a seccomp profile (see seccomp.go: Docker's kind of deny list, plus no set-ID bit on
// any file and no fallocate), and dies with its parent.
//
// # Who the code is on the host
//
// When labmate runs as an ordinary user, sandboxed code is that user on the host. When it runs
// as root, it is never root: the code runs as an unprivileged account that owns nothing else
// ([HostUser], created by scripts/deps; [FallbackHostID] where it is missing; Policy.HostUser
// names another). Every command is forked from one thread of labmate's own (see launch.go),
// still root, which puts the command in its cgroups and — for a workspace or read-only path
// below a directory only root may enter (/root/project, a 0700 temporary directory), which the
// account could not pass — in a fresh private mount namespace where those paths are bound into
// an empty directory the account can reach (bridgeDir), each opened without following a
// symlink and bound by its descriptor. The fork drops root for the account (setgroups, setgid,
// setuid, no inheritable capability) and execs bwrap, whose user namespace maps [UID] to that
// account: no program runs as root on the command's side, and [Sandbox.Start] is the only way
// to start it (exec.Cmd's own Start refuses). A workspace path is taken once, when the
// command is made, its symbolic links resolved only where the account could not have made
// or replaced them (hostID.trusted: a link the account owns, or in a directory it may write,
// is refused); the directory is then opened with no link followed, both to give it to the
// account and to bind it. Resolving by path again let a job whose workspace was a/etc inside
// a session's have the host's /etc given to the account, a cell's process having exchanged a
// with a link to / after the job's own checks (job/tools TestAttackIntermediateSwap).
// So what a cell writes is the account's, a set-ID bit it managed to set could only ever give
// the account's identity, and the workspace is given to the account (its directory, and what
// root owns in it, the top-level dot-entries excepted: they stay root's, read-only inside).
//
// This holds in every mode, not only ModeBubblewrap: as root, ModeNamespaces and ModeNone run
// code as the same account through the same launcher and setpriv(1), adding no new privileges
// (a host set-user-ID program such as su gains nothing) and death with labmate. In
// ModeNamespaces root makes the namespaces and the account, without CAP_SYS_ADMIN, cannot setns
// back into the host's; the account's processes share no user namespace of their own, so the
// pids cgroup, not RLIMIT_NPROC, bounds them. The code reaches the host's files as the account
// does: a read-only path it cannot read is refused when the command is made, and a workspace
// below a directory only root may enter (/root/project, a 0700 temporary directory) is bound
// back at its own path over a small tmpfs that replaces that directory in the command's mount
// namespace — the account could not look into it anyway — so absolute paths still work. A mode
// that cannot run code as the account (setpriv missing, no account) is refused, as root,
// with an error that says so: labmate never runs model-written code as root. Outside
// ModeBubblewrap the commands of one labmate share that account, so they can reach each
// other's workspaces and processes and make files set-user-ID to it (no seccomp there): the
// account owns nothing else, and those modes isolate nothing anyway.
// Test: TestEveryModeDropsRoot (every mode, as root and again as nobody); kernel/shell
// TestMPIAsRoot (--no-sandbox as root: mpirun on 2 ranks, as the account).
//
// The command's environment exists only inside the sandbox (bwrap --clearenv --setenv; env(1)
// in the other modes): bwrap, setpriv and a job's recorder run in labmate's own minimal
// environment, so no variable of a request (LD_PRELOAD, GCONV_PATH, …) reaches a process
// outside. The root and /dev are read-only; writable are the workspace, a
// size-capped private /tmp (Policy.TmpBytes) holding a private [Home], and a 64 MiB /dev/shm.
// Each top-level dot-entry of the workspace (.git, .vscode, .envrc, …) is mounted read-only over
// itself, so code cannot plant a git hook or edit a configuration that runs on the host; not
// covered are dot-entries the code creates, symlinked ones and deeper ones (sub/.git). Other
// code in the same workspace (a job's, another kernel's) may swap a listed dot-entry for a
// symbolic link before it is mounted, and bwrap binds by path (it calls realpath(3) even on
// --ro-bind-fd's descriptor): a relative link climbing out of the workspace had it mount the
// host's /proc, or any host directory whose path also exists in the sandbox, over the
// sandbox's (21 of 40 starts beside a swapping process). As root the launcher mounts each
// entry read-only itself, in the command's mount namespace, opened without following a link
// and moved onto its own descriptor (open_tree, mount_setattr, move_mount), before the
// workspace is bound; bwrap's recursive bind carries it, locked read-only. Test:
// TestAttackDotEntrySwap. As an ordinary user only bwrap can mount, so that swap can still win
// there: a hole, left open (the test is skipped).
// Policy.Hide masks host paths even inside the workspace (labmate's data directory when the
// workspace is the home directory). With Policy.Network the host's network namespace is shared,
// and with it the host's abstract unix sockets.
//
// [ModeNamespaces] is the fallback when bubblewrap is missing: the command starts directly in new
// user (not as root: see below), mount, pid, network, ipc and uts namespaces. The network and
// the host's processes are out of reach, but without a helper binary nothing can remount the
// filesystem between clone and exec, so the code can write wherever its user can. Use it for
// mistakes, not for malicious code.
//
// [ModeNone] starts a plain process with the same limits. It isolates nothing and must be chosen
// explicitly (the CLI's --no-sandbox). As root, it still runs code as the sandbox's account.
//
// # What labmate's host side touches
//
// Code in a workspace is hostile: it can make any name there a symbolic link (to /etc/shadow,
// to /), a FIFO, a directory, a huge file or 300 000 files, and swap a directory for a link
// between a check and a use; labmate's host side often runs as root. Any value a request
// carries (an environment, a path, a name) is hostile too. Each place the host side takes one,
// and the test that attacks it:
//
//   - A job's environment (submit_job from the agent, MCP or REST, an operation's job request,
//     labmate job submit --env): names that change how programs load or start — LD_*,
//     GCONV_PATH, GLIBC_TUNABLES, BASH_ENV, ENV, PYTHONPATH, PYTHONSTARTUP, NODE_OPTIONS,
//     PERL5OPT, OCTAVE_*, … ([RefusedEnvNames]) — are refused naming the variable
//     ([CheckUserEnv]: job/tools, operation.CheckJob, job/local and job/slurm Submit, the CLI).
//     Tests: TestCheckUserEnv; job/local TestAttackLDPreloadRefused; server
//     TestAttackLDPreloadJob (REST, and MCP over loopback HTTP with the official client); agent
//     TestSubmitJobRefusesLDPreload.
//   - A job's environment let through anyway reaches the sandboxed command only: job/local
//     starts the recorder, the wrappers and bwrap with labmate's own variables, and a preamble
//     inside the sandbox exports the job's. Tests: job/local TestAttackLDPreloadNotOnHost (a
//     gcc-built library whose constructor records each process it loads in: none is in the
//     host's mount namespace), TestHostEnvClean.
//   - A job's workspace: resolved once, by the caller that checks it (the CLI, the confined
//     submit_job, the server's runner), which submits the path it checked; Submit opens that
//     path with openat2 RESOLVE_NO_SYMLINKS (a path through a link is refused, never resolved
//     a second time) and keeps its device and inode; start opens it again the same way and
//     refuses another directory, and the job's first instruction inside the sandbox checks it
//     once more, so a swap after the check runs nothing. Submit used to resolve the path again:
//     a cell exchanging the checked directory with a link to /etc had jobs pinned to /etc,
//     which labmate as root gave to the sandbox's account and ran the job in. Tests: job/tools
//     TestAttackConfineSwap (10 jobs past the check beside a swapping process: several wrote
//     in the host directory, given to the account, before), TestConfine; job/local
//     TestAttackWorkspaceSwap, TestPreambleRefusesOtherDirectory; server TestJobHostileWorkspace.
//   - A job's followed files: read through an os.Root on the pinned workspace, regular files
//     only, without blocking (job/joblog); the operation's job follower opens the workspace
//     without any symbolic link (operation.OpenRootNoLinks). Tests: job/local
//     TestAttackFollowSymlinkFIFO; operation TestOpenRootNoLinks.
//   - A job's log (DIR/jobs/ID/log, on the host's disk, outside the workspace quota): a record
//     costs some 80 bytes more than its line, and a followed file truncated and rewritten is
//     read again, so the log is bounded (job/joblog DefaultMaxBytes, 256 MiB; local
//     Options.MaxLogBytes) and ends with a line saying it was cut; a Collect writes its
//     records every MiB rather than holding them all. Test: job/local TestAttackLogFlood (512
//     KiB of empty lines made a 56 MB log before).
//   - .labmate: made by labmate before the first kernel of a workspace starts and before a job
//     starts, so that it is mounted read-only inside the sandbox; opened without following a
//     link, and used only when it is labmate's user's and writable by nobody else. Tests: server
//     TestAttackLabmateDirReadOnly; job/local TestLabmateDirReadOnly; lab/benchrun
//     TestAttackLabmateDir.
//   - The bench's journal .labmate/bench.jsonl, replayed and appended: opened through the
//     directory's descriptor with O_NOFOLLOW|O_NONBLOCK, a regular file with one link, at most
//     benchrun.MaxJournal bytes. Tests: lab/benchrun TestAttackJournal (symlink, FIFO,
//     directory, hard link, huge); server TestAttackPlantedJournal (FIFO and symlink in a live
//     server: other sessions and /healthz answer within 5 s, the file outside is untouched, the
//     session's bench names the cause).
//   - The bench's socket and pipes: made through the directory's descriptor, mode 0600, given to
//     the sandbox's user when it is another (benchrun.ServeOptions.UID); a pipe is opened
//     O_NOFOLLOW and must be the FIFO just made. Test: lab/benchrun TestBenchModes.
//   - Artifacts (the scan after each cell, GET …/artifacts/PATH, MCP) and a cell's followed
//     files: an os.Root on the workspace, regular files only, O_NONBLOCK, a size budget.
//     Tests: server TestArtifactREST (a symlink to /etc/passwd, a symlinked /etc, a FIFO);
//     operation TestFollower, TestExecArtifacts.
//   - Kernel snapshots (.labmate/state, the agent's checkpoints): inside the workspace through
//     an os.Root, the manifest written O_EXCL and renamed; the data file the save cell leaves
//     (its function is the cell's to replace) is opened O_NONBLOCK and must be a regular file.
//     Tests: kernel/kerneltest Snapshot/SymlinkOutOfTheWorkspace (a .labmate symlinked out);
//     kernel/python TestAttackSnapshotFIFO, TestAttackRestoreFIFO (a FIFO, or a symlink to
//     one, for the data file: Save and Restore blocked in open(2) for ever before).
//   - Locks: a server session's lock is never held while a kernel starts or its bench is served
//     (files in the workspace); reaping and evicting only TryLock a session, so the server's
//     lock never waits for one; /healthz lists as stuck_sessions those whose host-side work on
//     the workspace has taken longer than 30 s, with ok still true (the others are served).
//     Tests: server TestStuckSessionAlone, TestAttackPlantedJournal.
//
// The quota's walk of the workspace is in One budget. eval/benchtasks writes
// and grades a task's journal through benchrun.WriteJournal and benchrun.OpenJournal, the same
// way.
//
// # One budget
//
// Every command gets a cgroup of its own, which it is born in (the launcher forks it there; a
// job's command joins it from a wrapper shell before its first instruction): cgroup v2 when the
// unified hierarchy delegates memory and pids to labmate (a container's own root, a systemd
// unit or scope with Delegate=yes, or a cgroup labmate is alone in; labmate moves its
// processes into labmate-main and makes the commands' cgroups in labmate/, following the
// no-internal-processes rule), else cgroup v1 per controller where
// the hierarchy is writable (as root). It bounds the whole tree: memory with /tmp and /dev/shm
// pages and no swap (Policy.MemoryBytes; the kernel's OOM killer ends what does not fit and
// [Sandbox.Exceeded] reports it), processes and threads (Policy.MaxProcs; this is what contains
// a fork bomb run by root, because RLIMIT_NPROC never binds root), and CPU time
// (Policy.CPUs). Each process also runs under rlimits set by prlimit(1): RLIMIT_AS at the
// memory budget (an oversized allocation fails recoverably, e.g. MemoryError in Python) and
// RLIMIT_FSIZE at the file-size cap, at most the quota.
//
// The workspace quota (Policy.DiskBytes; for local jobs job/local's default, 10 GiB) bounds how
// much the workspace may grow while one command runs. There is no unprivileged filesystem
// quota, so a watchdog measures the workspace's allocated blocks (each inode once, read-only
// subtrees skipped, through directory descriptors that never follow a symlink) and charges
// every inode [InodeBytes] (4 KiB) on top: an empty file or directory allocates no block of its
// own, and 300 000 of them would otherwise be free while costing the filesystem inodes and the
// watchdog time. It walks every 10 ms to 5 s, depending on the size of the tree, so that
// walking costs labmate at most a twentieth of a core, and only while the sandbox uses CPU; a
// tree that takes longer than 10 ms to walk is measured by du(1) run inside the sandbox's
// cgroup, on the sandbox's CPU and memory budget, not the host's. Between walks it reads,
// every 1–10 ms, the sandbox's unwritten page cache and its kernel memory (inodes and dentries
// are charged there) from its memory cgroup, and walks at once when either could take the
// workspace past its quota; such a walk, and the one after a breach, runs with the sandbox's
// processes stopped (SIGSTOP), so that nothing grows while a big tree is measured. fallocate,
// which allocates without writing, is refused by the seccomp profile. On a breach every
// process of the sandbox gets a file-size limit of 0, so every write to a file fails at once
// ("File too large") until the workspace is back within its quota; Exceeded reports the
// breach, on which the kernel interrupts the cell; a command that still grows the workspace
// (files or directories, which no file-size limit stops, or a shared mapping) is killed. The
// overshoot is what the code makes before a breach is seen, and after it until it is stopped
// or killed: measured under 64 MiB (the bound is max(10%, 64 MiB)) whether it writes,
// fallocates, or makes 300 000 empty files, in a sandbox (TestQuota, TestQuotaEmptyFiles), a
// Python kernel (kernel/python TestQuotaAttacks) and a local job (cmd/labmate
// TestJobDiskQuota, TestJobDiskQuotaFiles). The host's cost for a workspace of 300 000 files:
// BenchmarkQuotaHostCPU.
//
// [Sandbox.Limits] says which limits are enforced and how; [Sandbox.CheckLimits] fails when
// the memory or process limit cannot be enforced for the sandbox as a whole (an ordinary user
// on a cgroup v1 machine, or no delegated v2 cgroup), and the CLI refuses to run code then. In
// ModeNamespaces and ModeNone the code could lift its own cgroup limits, as it can write
// wherever the caller can.
package sandbox
