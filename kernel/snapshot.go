package kernel

import (
	"context"
	"errors"
	"time"

	"github.com/labmate/labmate/internal/seconds"
)

// Errors a Snapshotter returns (wrapped).
var (
	// ErrNoSnapshot: the directory holds no snapshot.
	ErrNoSnapshot = errors.New("kernel: no snapshot")
	// ErrBadSnapshot: the snapshot is truncated, corrupt, of another kernel, or the
	// interpreter could not read it. The kernel's session is unharmed.
	ErrBadSnapshot = errors.New("kernel: bad snapshot")
)

// Snapshotter is a Kernel that can save what its interpreter can serialise of its variables
// into a directory and load it into a later session: Python pickles each global on its own,
// Octave saves the variables that save -binary can write. The bash kernel is not one.
//
// The directory must lie inside the kernel's workspace. The interpreter writes the snapshot in
// the workspace; the host only moves it into the directory, checksums it and writes a manifest,
// atomically, so that a crash mid-save leaves the previous snapshot intact. A snapshot is
// loaded by the interpreter inside the sandbox, never by the host: loading a pickle runs code.
type Snapshotter interface {
	// Save replaces the snapshot in dir with the interpreter's variables. Names that cannot be
	// saved are listed in Skipped with the reason; the rest are saved. It runs like a cell:
	// the kernel must be idle, and cancelling ctx interrupts it.
	Save(ctx context.Context, dir string) (*Snapshot, error)
	// Restore loads the snapshot in dir into the interpreter. Saved lists the names restored;
	// Skipped those the snapshot lacks (not saved) and those that failed to load, with reasons.
	// A missing snapshot is ErrNoSnapshot, a truncated or corrupt one ErrBadSnapshot.
	Restore(ctx context.Context, dir string) (*Snapshot, error)
}

// Snapshot describes a saved (or restored) interpreter state. It is also the manifest the
// snapshot directory holds.
type Snapshot struct {
	Kernel  string    `json:"kernel"`
	Time    time.Time `json:"time"`
	File    string    `json:"file"`   // the data file, in the snapshot directory
	Size    int64     `json:"size"`   // its length in bytes
	CRC32C  uint32    `json:"crc32c"` // its CRC-32C (Castagnoli)
	Saved   []string  `json:"saved,omitempty"`
	Skipped []Skipped `json:"skipped,omitempty"`
	// Duration is how long the Save or Restore took.
	Duration time.Duration `json:"-"` // duration_s
}

// Skipped is a variable that was not saved or not restored, and why.
type Skipped struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// MarshalJSON writes the snapshot with how long it took in seconds (duration_s).
func (s Snapshot) MarshalJSON() ([]byte, error) {
	type plain Snapshot
	return seconds.Marshal(plain(s), seconds.F("duration", &s.Duration))
}

// UnmarshalJSON reads duration_s (or an older manifest's duration_ns).
func (s *Snapshot) UnmarshalJSON(b []byte) error {
	type plain Snapshot
	return seconds.Unmarshal(b, (*plain)(s), seconds.F("duration", &s.Duration))
}
