package shell_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/shell"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
)

// TestQuotaStopsCell: dd writing file after file into the workspace is stopped at the quota,
// and the cell's result says why.
func TestQuotaStopsCell(t *testing.T) {
	mode, err := sandbox.Detect()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(mode, &sandbox.Policy{DiskBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.CheckLimits(); err != nil && os.Geteuid() != 0 {
		t.Skip(err)
	}
	ws := t.TempDir()
	k, err := shell.Start(context.Background(), &kernel.Options{Sandbox: sb, Workspace: ws, Grace: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: "for i in $(seq 20); do dd if=/dev/zero of=f$i bs=1M count=100 status=none; echo f$i; done", Timeout: time.Minute})
	if r.Err != nil || r.Res.Status != protocol.StatusError || !strings.HasPrefix(r.Res.Error, "workspace quota exceeded: ") || !strings.Contains(r.Res.Error, "of 256 MiB") {
		t.Fatalf("%v %+v; want error: workspace quota exceeded: … of 256 MiB\n%s", r.Err, r.Res, r.Output())
	}
	// The loop may run to its end before the interrupt reaches it (every dd after the breach
	// fails at once, "File too large"): what must hold is that the files did not grow on.
	entries, err := os.ReadDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	var written int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			written += fi.Size()
		}
	}
	if written > 512<<20 {
		t.Errorf("%d MiB written in %d files past a 256 MiB quota", written>>20, len(entries))
	}
	if r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: "echo $HOME $(whoami)"}); r.Res == nil || r.Res.Status != protocol.StatusOK ||
		strings.Join(r.Stdout, "") != sandbox.Home+" "+sandbox.User {
		t.Errorf("the next cell: %+v %q", r.Res, r.Stdout)
	}
	t.Log(r.Res.Error)
}
