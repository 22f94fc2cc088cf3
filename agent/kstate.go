package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/protocol"
)

// KernelState is a kernel's variables as the run last saved them (State.Kernels) or as a
// resumed run restored them (an EventKernelState).
type KernelState struct {
	Kernel string `json:"kernel"`
	// Operation is the run_code operation after which the variables were saved.
	Operation string `json:"operation,omitempty"`
	// Names are the variables saved, or restored.
	Names []string `json:"names,omitempty"`
	// Skipped are the variables that could not be saved or restored, with the reasons.
	Skipped []kernel.Skipped `json:"skipped,omitempty"`
	// Error says why the last save or the restore failed. A failed save leaves the snapshot
	// of Operation in place.
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"-"` // duration_s
}

// stateDir is where the run keeps the snapshot of a kernel: in its workspace, which the kernel
// of a resumed run shares (a dot-directory, out of the way of the task's files).
func (r *run) stateDir(name string, k kernel.Kernel) string {
	return filepath.Join(k.Info().Workspace, ".labmate", "state", r.st.RunID, name)
}

// saveKernel saves the variables of the kernel that ran o, so that a resumed run gets them
// back. A kernel that cannot be snapshotted (bash), or a save that fails, is recorded for the
// note a resumed run shows the code module; the run goes on either way.
func (r *run) saveKernel(ctx context.Context, o *Outcome) {
	k := r.kernels[o.Kernel]
	if r.a.opts.Cells != nil && o.Result != nil && o.Reason != protocol.ReasonCrashed {
		k, _ = r.kernel(ctx, o.Kernel) // the session's, which ran the cell
	}
	if k == nil || o.OperationID == "" {
		return // the operation did not run, or its interpreter is gone
	}
	if r.st.Kernels == nil {
		r.st.Kernels = map[string]*KernelState{}
	}
	s, ok := k.(kernel.Snapshotter)
	if !ok {
		r.st.Kernels[o.Kernel] = &KernelState{Kernel: o.Kernel, Operation: o.OperationID, Error: cannotSave(o.Kernel)}
		return
	}
	snap, err := s.Save(ctx, r.stateDir(o.Kernel, k))
	if err != nil {
		ks := &KernelState{Kernel: o.Kernel}
		if old := r.st.Kernels[o.Kernel]; old != nil {
			*ks = *old
		}
		ks.Error = fmt.Sprintf("saving the variables after operation %s failed: %v", o.OperationID, err)
		r.st.Kernels[o.Kernel] = ks
		return
	}
	r.st.Kernels[o.Kernel] = &KernelState{Kernel: o.Kernel, Operation: o.OperationID, Names: snap.Saved,
		Skipped: snap.Skipped, Duration: snap.Duration}
}

// restoreKernels starts, on resume, each kernel the run had saved and loads its variables back,
// reporting each as an event; what came back and what did not becomes the resume note.
func (r *run) restoreKernels(ctx context.Context) error {
	names := slices.Sorted(maps.Keys(r.st.Kernels))
	var notes []string
	for _, name := range names {
		saved := r.st.Kernels[name]
		got := &KernelState{Kernel: name, Operation: saved.Operation, Skipped: saved.Skipped}
		begin := time.Now()
		if err := r.restoreKernel(ctx, saved, got); err != nil {
			got.Error = err.Error()
		}
		got.Duration = time.Since(begin)
		notes = append(notes, got.note(saved))
		if err := r.emit(ctx, &Event{Type: EventKernelState, KernelState: got}, false); err != nil {
			return err
		}
	}
	r.restored = strings.Join(notes, "")
	return nil
}

// restoreKernel fills got with what the kernel of saved restored.
func (r *run) restoreKernel(ctx context.Context, saved, got *KernelState) error {
	name := saved.Kernel
	if saved.Error != "" && len(saved.Names) == 0 {
		return errors.New(saved.Error) // nothing was ever saved (a bash kernel, a failing save)
	}
	k, err := r.kernel(ctx, name)
	if err != nil {
		return fmt.Errorf("starting the %s kernel: %w", name, err)
	}
	s, ok := k.(kernel.Snapshotter)
	if !ok {
		return errors.New(cannotSave(name))
	}
	snap, err := s.Restore(ctx, r.stateDir(name, k))
	if err != nil {
		return err
	}
	got.Names, got.Skipped = snap.Saved, snap.Skipped
	return nil
}

func cannotSave(kernelName string) string {
	return fmt.Sprintf("a %s kernel cannot save its state", kernelName)
}

// note tells the code module what came back of a kernel whose last save was saved.
func (got *KernelState) note(saved *KernelState) string {
	if got.Error != "" {
		return fmt.Sprintf("- %s kernel: its variables could not be restored and are gone (%s).\n", got.Kernel, got.Error)
	}
	var b strings.Builder
	switch {
	case len(got.Names) == 0:
		fmt.Fprintf(&b, "- %s kernel: no variables were restored.\n", got.Kernel)
	default:
		fmt.Fprintf(&b, "- %s kernel: restored as they were after operation %s: %s.\n", got.Kernel, got.Operation, strings.Join(got.Names, ", "))
	}
	if saved.Error != "" {
		fmt.Fprintf(&b, "  Later changes are lost: %s.\n", saved.Error)
	}
	if len(got.Skipped) > 0 {
		b.WriteString("  NOT restored (define them again):")
		for _, s := range got.Skipped {
			fmt.Fprintf(&b, " %s (%s);", s.Name, textcut.Head(s.Reason, 160))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Summary is one line for a person: "python: 3 variables restored (np, x, d); not restored: f".
func (ks *KernelState) Summary() string {
	if ks.Error != "" {
		return fmt.Sprintf("%s: nothing restored: %s", ks.Kernel, ks.Error)
	}
	s := fmt.Sprintf("%s: %d variables restored (%s)", ks.Kernel, len(ks.Names), textcut.Head(strings.Join(ks.Names, ", "), 200))
	if len(ks.Skipped) > 0 {
		names := make([]string, len(ks.Skipped))
		for i, x := range ks.Skipped {
			names[i] = x.Name
		}
		s += "; not restored: " + textcut.Head(strings.Join(names, ", "), 200)
	}
	return s
}
