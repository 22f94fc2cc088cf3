package agent

import (
	"encoding/json"

	"github.com/labmate/labmate/internal/seconds"
)

// A run's records carry their times in seconds (duration_s, elapsed_s), as all of labmate's
// JSON does; records written before that carried nanoseconds (duration_ns, elapsed_ns), which
// these decoders still read.

// MarshalJSON writes the call with its duration in seconds (duration_s).
func (c ModuleCall) MarshalJSON() ([]byte, error) {
	type plain ModuleCall
	return json.Marshal(struct {
		plain
		DurationS float64 `json:"duration_s"`
	}{plain(c), seconds.Of(c.Duration)})
}

// UnmarshalJSON reads duration_s (or an older record's duration_ns).
func (c *ModuleCall) UnmarshalJSON(b []byte) error {
	type plain ModuleCall
	v := struct {
		*plain
		DurationS  *float64 `json:"duration_s"`
		DurationNS *int64   `json:"duration_ns"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	c.Duration = seconds.Duration(v.DurationS, v.DurationNS)
	return nil
}

// MarshalJSON writes the stats with their wall time in seconds (elapsed_s).
func (s Stats) MarshalJSON() ([]byte, error) {
	type plain Stats
	return json.Marshal(struct {
		plain
		ElapsedS float64 `json:"elapsed_s"`
	}{plain(s), seconds.Of(s.Elapsed)})
}

// UnmarshalJSON reads elapsed_s (or an older record's elapsed_ns).
func (s *Stats) UnmarshalJSON(b []byte) error {
	type plain Stats
	v := struct {
		*plain
		ElapsedS  *float64 `json:"elapsed_s"`
		ElapsedNS *int64   `json:"elapsed_ns"`
	}{plain: (*plain)(s)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	s.Elapsed = seconds.Duration(v.ElapsedS, v.ElapsedNS)
	return nil
}

// MarshalJSON writes the kernel state with how long its save or restore took in seconds
// (duration_s).
func (k KernelState) MarshalJSON() ([]byte, error) {
	type plain KernelState
	return json.Marshal(struct {
		plain
		DurationS float64 `json:"duration_s"`
	}{plain(k), seconds.Of(k.Duration)})
}

// UnmarshalJSON reads duration_s (or an older record's duration_ns).
func (k *KernelState) UnmarshalJSON(b []byte) error {
	type plain KernelState
	v := struct {
		*plain
		DurationS  *float64 `json:"duration_s"`
		DurationNS *int64   `json:"duration_ns"`
	}{plain: (*plain)(k)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	k.Duration = seconds.Duration(v.DurationS, v.DurationNS)
	return nil
}

// MarshalJSON writes the checkpoint with the earlier sessions' wall time in seconds
// (elapsed_s).
func (s State) MarshalJSON() ([]byte, error) {
	type plain State
	return json.Marshal(struct {
		plain
		ElapsedS float64 `json:"elapsed_s"`
	}{plain(s), seconds.Of(s.Elapsed)})
}

// UnmarshalJSON reads elapsed_s (or an older checkpoint's elapsed_ns).
func (s *State) UnmarshalJSON(b []byte) error {
	type plain State
	v := struct {
		*plain
		ElapsedS  *float64 `json:"elapsed_s"`
		ElapsedNS *int64   `json:"elapsed_ns"`
	}{plain: (*plain)(s)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	s.Elapsed = seconds.Duration(v.ElapsedS, v.ElapsedNS)
	return nil
}
