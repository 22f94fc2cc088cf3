// Package sandbox is the process isolation used by kernels and jobs: it turns an interpreter's
// argv into an *exec.Cmd that runs with no network, a read-only view of the host, a writable
// workspace and resource limits, and it finds and kills that process tree again. *Sandbox
// implements kernel.Sandbox.
//
// Three modes exist; [Detect] picks the best one that works on this machine.
//
// [ModeBubblewrap] runs the command under bwrap(1) in new user, mount, pid, network, ipc, uts
// and cgroup namespaces with every capability dropped. The host filesystem is mounted
// read-only; only the workspace is writable; /tmp, /dev and /proc are private. It protects the
// host's files, processes and network from the code. It does not hide the host's files: anything
// the calling user can read, the code can read.
//
// [ModeNamespaces] is the fallback when bubblewrap is missing: the command starts directly in new
// user, mount, pid, network, ipc and uts namespaces. The network and the host's processes are out
// of reach, but without a helper binary nothing can remount the filesystem between clone and
// exec, so the code can write wherever the calling user can. Use it for mistakes, not for
// malicious code.
//
// [ModeNone] starts a plain process with the same limits. It isolates nothing and must be chosen
// explicitly (the CLI's --no-sandbox).
//
// In every mode the interpreter runs under rlimits set by prlimit(1) before it starts:
// RLIMIT_AS (an oversized allocation fails recoverably, e.g. MemoryError in Python) and
// RLIMIT_FSIZE. The process count of the whole sandbox is capped by a cgroup v1 "pids" cgroup when
// one is writable (as root); this is what contains a fork bomb run by root, because
// RLIMIT_NPROC never binds root, not even inside a user namespace. Without that cgroup the cap
// falls back to RLIMIT_NPROC inside the sandbox's user namespace, which binds ordinary users only.
// In ModeNamespaces and ModeNone the code could lift its own cgroup cap, as it can write wherever
// the caller can. Describe says which limits are really in force.
package sandbox
