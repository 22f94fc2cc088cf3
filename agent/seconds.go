package agent

import "github.com/labmate/labmate/internal/seconds"

// A run's records carry their times in seconds (duration_s, elapsed_s), as all of labmate's
// JSON does; records written before that carried nanoseconds (duration_ns, elapsed_ns), which
// these decoders still read.

// MarshalJSON writes the call with its duration in seconds (duration_s).
func (c ModuleCall) MarshalJSON() ([]byte, error) {
	type plain ModuleCall
	return seconds.Marshal(plain(c), seconds.F("duration", &c.Duration))
}

// UnmarshalJSON reads duration_s (or an older record's duration_ns).
func (c *ModuleCall) UnmarshalJSON(b []byte) error {
	type plain ModuleCall
	return seconds.Unmarshal(b, (*plain)(c), seconds.F("duration", &c.Duration))
}

// MarshalJSON writes the stats with their wall time in seconds (elapsed_s).
func (s Stats) MarshalJSON() ([]byte, error) {
	type plain Stats
	return seconds.Marshal(plain(s), seconds.F("elapsed", &s.Elapsed))
}

// UnmarshalJSON reads elapsed_s (or an older record's elapsed_ns).
func (s *Stats) UnmarshalJSON(b []byte) error {
	type plain Stats
	return seconds.Unmarshal(b, (*plain)(s), seconds.F("elapsed", &s.Elapsed))
}

// MarshalJSON writes the kernel state with how long its save or restore took in seconds
// (duration_s).
func (k KernelState) MarshalJSON() ([]byte, error) {
	type plain KernelState
	return seconds.Marshal(plain(k), seconds.F("duration", &k.Duration))
}

// UnmarshalJSON reads duration_s (or an older record's duration_ns).
func (k *KernelState) UnmarshalJSON(b []byte) error {
	type plain KernelState
	return seconds.Unmarshal(b, (*plain)(k), seconds.F("duration", &k.Duration))
}

// MarshalJSON writes the checkpoint with the earlier sessions' wall time in seconds
// (elapsed_s).
func (s State) MarshalJSON() ([]byte, error) {
	type plain State
	return seconds.Marshal(plain(s), seconds.F("elapsed", &s.Elapsed))
}

// UnmarshalJSON reads elapsed_s (or an older checkpoint's elapsed_ns).
func (s *State) UnmarshalJSON(b []byte) error {
	type plain State
	return seconds.Unmarshal(b, (*plain)(s), seconds.F("elapsed", &s.Elapsed))
}
