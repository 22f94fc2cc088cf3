package kerneltest

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// listen opens an HTTP-answering TCP listener on the host's loopback for the sandbox to
// (fail to) reach.
func listen(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello"))
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// hostResponsive fails the test when the host cannot start a process within a second.
func hostResponsive(t *testing.T) {
	t.Helper()
	begin := time.Now()
	if err := exec.Command("/bin/true").Run(); err != nil {
		t.Fatalf("host cannot start a process: %v", err)
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("host took %v to start /bin/true", d)
	}
}

func syscallKill(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

// leftovers counts live processes whose working directory is the workspace: the
// interpreter and everything it started. After Close there must be none.
func leftovers(workspace string) int {
	deadline := time.Now().Add(3 * time.Second)
	for {
		n := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err == nil && cwd == workspace && !zombie(pid) {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}
