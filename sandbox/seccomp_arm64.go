package sandbox

import "golang.org/x/sys/unix"

// auditArch is the architecture the profile is for; arm64 has no second ABI to refuse.
const (
	auditArch    = unix.AUDIT_ARCH_AARCH64
	x32          = 0
	sysFchmodat2 = 452
)

// archRules: arm64 has only the *at forms of the calls in commonRules.
func archRules() []rule {
	return always(unix.EPERM, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_LOOKUP_DCOOKIE, unix.SYS_NFSSERVCTL)
}
