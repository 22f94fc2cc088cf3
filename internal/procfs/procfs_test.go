package procfs

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

func TestTree(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 5 & sleep 5 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var kids []int
	for i := 0; i < 200 && len(kids) < 2; i++ { // the shell forks its sleeps right away
		kids = Children(cmd.Process.Pid)
		exec.Command("/bin/true").Run()
	}
	if len(kids) != 2 {
		t.Fatalf("Children = %v, want the two sleeps", kids)
	}
	if d := Descendants(cmd.Process.Pid); !slices.Equal(d, kids) {
		t.Errorf("Descendants = %v, want %v", d, kids)
	}
	// A child caught between fork and exec can have no resident pages yet: wait for the sleep to settle.
	var st Stat
	ok := false
	for i := 0; i < 200; i++ {
		if st, ok = ReadStat(kids[0]); !ok || st.RSSBytes > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !ok || st.State == 0 || st.Start == 0 || st.RSSBytes <= 0 {
		t.Errorf("ReadStat(sleep) = %+v, %v", st, ok)
	}
	if _, ok := ReadStat(os.Getpid()); !ok {
		t.Error("ReadStat(self) failed")
	}
	if _, ok := ReadStat(1 << 30); ok {
		t.Error("ReadStat of a pid that cannot exist succeeded")
	}
}
