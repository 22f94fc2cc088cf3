package agent

import (
	"testing"

	"github.com/labmate/labmate/kernel"
)

func TestKernelStateNote(t *testing.T) {
	ok := &KernelState{Kernel: "python", Operation: "op-2", Names: []string{"x", "d"}}
	for _, c := range []struct {
		name       string
		got, saved *KernelState
		want       string
	}{
		{"restored", ok, ok, "- python kernel: restored as they were after operation op-2: x, d.\n"},
		{"skipped", &KernelState{Kernel: "python", Operation: "op-2", Names: []string{"x"}, Skipped: []kernel.Skipped{{Name: "f", Reason: "PicklingError: lambda"}, {Name: "g", Reason: "TypeError: generator"}}}, ok,
			"- python kernel: restored as they were after operation op-2: x.\n  NOT restored (define them again): f (PicklingError: lambda); g (TypeError: generator);\n"},
		{"laterSaveFailed", ok, &KernelState{Kernel: "python", Operation: "op-2", Names: []string{"x", "d"}, Error: "saving the variables after operation op-3 failed: interrupted"},
			"- python kernel: restored as they were after operation op-2: x, d.\n  Later changes are lost: saving the variables after operation op-3 failed: interrupted.\n"},
		{"failed", &KernelState{Kernel: "octave", Error: "kernel: bad snapshot: … is truncated: 7 of 321 bytes", Skipped: ok.Skipped}, ok,
			"- octave kernel: its variables could not be restored and are gone (kernel: bad snapshot: … is truncated: 7 of 321 bytes).\n"},
		{"nothing", &KernelState{Kernel: "python", Operation: "op-1"}, &KernelState{Kernel: "python", Operation: "op-1"},
			"- python kernel: no variables were restored.\n"},
	} {
		if got := c.got.note(c.saved); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
