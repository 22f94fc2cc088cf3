package sandbox

import "golang.org/x/sys/unix"

// auditArch is the architecture the profile is for; x32 is the first system call number of
// the x32 ABI, which the profile refuses (0 where there is none).
const (
	auditArch    = unix.AUDIT_ARCH_X86_64
	x32          = 0x40000000
	sysFchmodat2 = 452 // fchmodat2(2), Linux 6.6; unknown to older kernels, which answer ENOSYS anyway
)

// archRules are the rules for the system calls only this architecture has: the old,
// path-relative forms of the calls in commonRules, and the old module and ioctl-port calls.
func archRules() []rule {
	r := always(unix.EPERM, unix.SYS_CREATE_MODULE, unix.SYS_GET_KERNEL_SYMS, unix.SYS_QUERY_MODULE,
		unix.SYS_IOPERM, unix.SYS_IOPL, unix.SYS_LOOKUP_DCOOKIE, unix.SYS_NFSSERVCTL, unix.SYS_SYSFS,
		unix.SYS__SYSCTL, unix.SYS_USELIB, unix.SYS_USTAT, unix.SYS_KEXEC_FILE_LOAD)
	return append(r,
		rule{nr: unix.SYS_CHMOD, errno: unix.EPERM, arg: 1, mask: setID, flagArg: -1},
		rule{nr: unix.SYS_CREAT, errno: unix.EPERM, arg: 1, mask: setID, flagArg: -1},
		rule{nr: unix.SYS_MKNOD, errno: unix.EPERM, arg: 1, mask: setID, flagArg: -1},
		rule{nr: unix.SYS_OPEN, errno: unix.EPERM, arg: 2, mask: setID, flagArg: 1, flagMask: createFlags},
	)
}
