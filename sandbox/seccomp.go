package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The seccomp profile of ModeBubblewrap, applied by bwrap to the command just before it execs
// it, and inherited by everything the command runs. It is a deny list in the spirit of
// Docker's default profile (github.com/moby/profiles/seccomp): the system calls that reach the
// host kernel's administration (modules, kexec, clocks, swap, quotas, reboot, accounting,
// keyrings), that mount or change namespaces, that open files by handle around the mount table, that are large attack surfaces for little use
// (bpf, perf_event_open, userfaultfd, io_uring — whose operations also escape this filter), or
// that the quota cannot see (fallocate allocates blocks without writing them: it fails with
// EOPNOTSUPP, and glibc's posix_fallocate falls back to writing, which the quota counts). On
// top of it, no file may get a set-user-ID or set-group-ID bit: chmod, fchmod, fchmodat and
// fchmodat2 with such a mode, and open, openat and creat creating a file with one, fail with
// EPERM (openat2, whose mode the filter cannot read, fails with ENOSYS, and the C library falls
// back to openat). The sandbox's uid owns nothing on the host, so a set-ID bit would be harmless
// anyway; the filter makes it impossible.
const seccompProfile = "labmate-default"

// rule is one system call the profile refuses, always (arg < 0) or when its argument arg has a
// bit of mask set (and, with flagArg ≥ 0, argument flagArg has a bit of flagMask set).
type rule struct {
	nr                int
	errno             unix.Errno
	arg               int
	mask              uint32
	flagArg, flagMask int
}

// always refuses nr with errno.
func always(errno unix.Errno, nrs ...int) []rule {
	out := make([]rule, len(nrs))
	for i, nr := range nrs {
		out[i] = rule{nr: nr, errno: errno, arg: -1, flagArg: -1}
	}
	return out
}

// setID is the mode bits the profile never lets a file get.
const setID = unix.S_ISUID | unix.S_ISGID

// createFlags are the open flags that create a file with the call's mode.
const createFlags = unix.O_CREAT | unix.O_TMPFILE

// commonRules are the rules for the system calls every architecture has.
func commonRules() []rule {
	r := always(unix.EPERM,
		unix.SYS_ACCT, unix.SYS_ADD_KEY, unix.SYS_BPF, unix.SYS_CLOCK_ADJTIME, unix.SYS_CLOCK_SETTIME,
		unix.SYS_DELETE_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_INIT_MODULE, unix.SYS_KCMP,
		unix.SYS_KEXEC_LOAD, unix.SYS_KEYCTL, unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_MOVE_MOUNT,
		unix.SYS_OPEN_TREE, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
		unix.SYS_MOUNT_SETATTR, unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_OPEN_BY_HANDLE_AT,
		unix.SYS_PERF_EVENT_OPEN, unix.SYS_PIVOT_ROOT, unix.SYS_QUOTACTL, unix.SYS_REBOOT, unix.SYS_REQUEST_KEY,
		unix.SYS_SETNS, unix.SYS_SETTIMEOFDAY, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_UNSHARE,
		unix.SYS_USERFAULTFD, unix.SYS_VHANGUP, unix.SYS_SYSLOG,
	)
	r = append(r, always(unix.ENOSYS, unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER,
		unix.SYS_IO_URING_REGISTER, unix.SYS_OPENAT2)...)
	r = append(r, always(unix.EOPNOTSUPP, unix.SYS_FALLOCATE)...)
	return append(r,
		rule{nr: unix.SYS_FCHMOD, errno: unix.EPERM, arg: 1, mask: setID, flagArg: -1},
		rule{nr: unix.SYS_FCHMODAT, errno: unix.EPERM, arg: 2, mask: setID, flagArg: -1},
		rule{nr: sysFchmodat2, errno: unix.EPERM, arg: 2, mask: setID, flagArg: -1},
		rule{nr: unix.SYS_OPENAT, errno: unix.EPERM, arg: 3, mask: setID, flagArg: 2, flagMask: createFlags},
		rule{nr: unix.SYS_MKNODAT, errno: unix.EPERM, arg: 2, mask: setID, flagArg: -1},
	)
}

// seccompFilter assembles the profile for this architecture: a classic BPF program over
// struct seccomp_data, as bwrap's --seccomp reads it (struct sock_filter, native byte order).
// ok is false on an architecture the profile does not know.
func seccompFilter() (prog []byte, ok bool) {
	if auditArch == 0 {
		return nil, false
	}
	const (
		offNr   = 0
		offArch = 4
		offArgs = 16
	)
	allow := bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW}
	deny := func(e unix.Errno) bpf.Instruction {
		return bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(e)&unix.SECCOMP_RET_DATA}
	}
	loadNr := bpf.LoadAbsolute{Off: offNr, Size: 4}
	loadArg := func(i int) bpf.Instruction { return bpf.LoadAbsolute{Off: uint32(offArgs + 8*i), Size: 4} } // the low half (little-endian)
	ins := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		deny(unix.ENOSYS), // another ABI (i386 through int 0x80): not allowed in
		loadNr,
	}
	if x32 != 0 {
		ins = append(ins, bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32, SkipFalse: 1}, deny(unix.ENOSYS))
	}
	for _, r := range append(commonRules(), archRules()...) {
		switch {
		case r.arg < 0:
			ins = append(ins, bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(r.nr), SkipFalse: 1}, deny(r.errno))
		case r.flagArg < 0:
			ins = append(ins,
				bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(r.nr), SkipFalse: 4},
				loadArg(r.arg),
				bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: r.mask, SkipFalse: 1},
				deny(r.errno),
				loadNr)
		default:
			ins = append(ins,
				bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(r.nr), SkipFalse: 6},
				loadArg(r.flagArg),
				bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: uint32(r.flagMask), SkipFalse: 3},
				loadArg(r.arg),
				bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: r.mask, SkipFalse: 1},
				deny(r.errno),
				loadNr)
		}
	}
	ins = append(ins, allow)
	raw, err := bpf.Assemble(ins)
	if err != nil {
		panic(fmt.Sprintf("sandbox: seccomp profile: %v", err)) // a bug in the rules above
	}
	var b bytes.Buffer
	for _, r := range raw {
		_ = binary.Write(&b, binary.NativeEndian, struct {
			Op     uint16
			Jt, Jf uint8
			K      uint32
		}{r.Op, r.Jt, r.Jf, r.K})
	}
	return b.Bytes(), true
}

// seccompFile writes the profile once into dir (a directory only its owner can write) and
// returns the file's path, named by its content so that concurrent processes agree.
func seccompFile(dir string) (string, error) {
	prog, ok := seccompFilter()
	if !ok {
		return "", nil
	}
	sum := sha256.Sum256(prog)
	p := filepath.Join(dir, "seccomp-"+hex.EncodeToString(sum[:8])+".bpf")
	if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, prog) {
		return p, nil
	}
	tmp, err := os.CreateTemp(dir, ".seccomp-")
	if err != nil {
		return "", fmt.Errorf("sandbox: seccomp profile: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(prog); err != nil {
		tmp.Close()
		return "", fmt.Errorf("sandbox: seccomp profile: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", fmt.Errorf("sandbox: seccomp profile: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("sandbox: seccomp profile: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return "", fmt.Errorf("sandbox: seccomp profile: %w", err)
	}
	return p, nil
}
