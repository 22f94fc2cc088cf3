// Package testutil holds helpers shared by labmate's tests.
package testutil

import (
	"testing"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/sandbox"
)

// KernelOptions are kernel options with the best sandbox this machine offers. The tests
// need isolation: with none available they fail, saying why.
func KernelOptions(t testing.TB) kernel.Options {
	t.Helper()
	mode, err := sandbox.Detect()
	if err != nil {
		t.Fatalf("no sandbox on this machine (install bubblewrap): %v", err)
	}
	sb, err := sandbox.New(mode, nil)
	if err != nil {
		t.Fatalf("sandbox %s: %v", mode, err)
	}
	return kernel.Options{Sandbox: sb, Grace: 2 * time.Second}
}
