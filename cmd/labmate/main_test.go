package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/protocol"
)

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "labmate-cli-test-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "labmate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// labmate runs the built binary in dir with stdin and returns stdout, stderr and the exit code.
func labmate(t *testing.T, dir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return labmateEnv(t, nil, dir, stdin, args...)
}

// labmateEnv is labmate with extra environment variables.
func labmateEnv(t *testing.T, env []string, dir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersion(t *testing.T) {
	out, _, code := labmate(t, t.TempDir(), "", "version")
	if code != 0 || !strings.HasPrefix(out, "labmate ") {
		t.Fatalf("version: %q, exit %d", out, code)
	}
}

func TestKernels(t *testing.T) {
	out, errOut, code := labmate(t, t.TempDir(), "", "kernels")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{"octave", "7.", "python", "numpy", "scipy", "shell", "sandbox: bubblewrap"} {
		if !strings.Contains(out, want) {
			t.Errorf("kernels output lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = labmate(t, t.TempDir(), "", "kernels", "--json")
	var v struct {
		Kernels []struct{ Name, Version, Error string }
		Sandbox struct {
			Available   bool
			Description string
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("kernels --json: %v\n%s", err, out)
	}
	if len(v.Kernels) != 3 || !v.Sandbox.Available {
		t.Errorf("kernels --json = %+v", v)
	}
}

func TestExecStreamsAndKeepsWorkspace(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "sim.py", "import json\nfor i in range(3):\n    print('step', i)\njson.dump({'ok': 1}, open('result.json', 'w'))\n")
	out, errOut, code := labmate(t, dir, "", "exec", "sim.py")
	if code != 0 || out != "step 0\nstep 1\nstep 2\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "labmate: ok") {
		t.Errorf("stderr %q lacks the status line", errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "result.json")); err != nil {
		t.Errorf("the cell could not write into its workspace (the current directory): %v", err)
	}
}

func TestExecJSON(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.m", "x = 3.5\nlabmate_log('energy', 2)\ny = undefined_thing + 1;\n")
	out, _, code := labmate(t, dir, "", "exec", "--json", "a.m")
	if code != 1 {
		t.Fatalf("exit %d, want 1 for an error:\n%s", code, out)
	}
	var msgs []*protocol.EnhancedMessage
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m protocol.EnhancedMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not NDJSON: %q: %v", sc.Text(), err)
		}
		msgs = append(msgs, &m)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) || m.OperationID != msgs[0].OperationID {
			t.Fatalf("message %d: seq %d op %s", i, m.Seq, m.OperationID)
		}
	}
	// Replaying the stream through a fresh log proves it obeys the state machine.
	testutil.Replay(t, slices.Values(msgs))
	types := []protocol.Type{msgs[0].Type, msgs[1].Type, msgs[2].Type, msgs[len(msgs)-1].Type}
	want := []protocol.Type{protocol.TypeRequest, protocol.TypeAck, protocol.TypeStart, protocol.TypeFailed}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("types %v, want %v", types, want)
		}
	}
	var failed protocol.Failed
	if err := msgs[len(msgs)-1].Decode(&failed); err != nil {
		t.Fatal(err)
	}
	if failed.Reason != protocol.ReasonError || failed.Result.Line != 3 || !strings.Contains(failed.Error, "undefined_thing") {
		t.Errorf("failed payload %+v", failed)
	}
	var sawLine, sawHelper bool
	for _, m := range msgs[3 : len(msgs)-1] {
		var p protocol.Progress
		if err := m.Decode(&p); err != nil || p.Observation == nil {
			t.Fatalf("progress %s: %v", m.Payload, err)
		}
		sawLine = sawLine || p.Observation.Line == "x = 3.5000"
		sawHelper = sawHelper || (p.Observation.Sample != nil && p.Observation.Sample.Name == "energy")
	}
	if !sawLine || !sawHelper {
		t.Errorf("progress lacks the stdout line (%v) or the telemetry sample (%v):\n%s", sawLine, sawHelper, out)
	}
}

func TestExecExitCodes(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "loop.sh", "while true; do :; done\n")
	write(t, dir, "unterminated.py", "for i in range(3):\n")
	write(t, dir, "garbage.py", "\x7fELF\x02\x01\x01\x00\xff\xfe")
	write(t, dir, "notes.txt", "x = 1")
	write(t, dir, "diverge.py", "import time\nx = 1.0\nfor i in range(100):\n    x *= 3\n    print('x =', x, flush=True)\n    time.sleep(0.05)\n")
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"timeout", "", []string{"exec", "--timeout", "500ms", "loop.sh"}, 124, "timeout"},
		{"unterminated", "", []string{"exec", "unterminated.py"}, 1, "IndentationError"},
		{"stdin", "print(6*7)", []string{"exec", "--kernel", "python", "-"}, 0, "ok"},
		{"missingFile", "", []string{"exec", "nothere.m"}, 2, "nothere.m: no such file"},
		{"unknownKernel", "", []string{"exec", "--kernel", "fortran", "notes.txt"}, 2, `unknown kernel "fortran"`},
		{"unknownExtension", "", []string{"exec", "notes.txt"}, 2, "pass --kernel"},
		{"stdinNeedsKernel", "x = 1", []string{"exec", "-"}, 2, "--kernel"},
		{"binary", "", []string{"exec", "garbage.py"}, 2, "not UTF-8"},
		{"noFile", "", []string{"exec"}, 2, "accepts 1 arg"},
		{"hotfix", "", []string{"exec", "diverge.py"}, 3, "stopped by perception"},
		{"hotfixOff", "", []string{"exec", "--hotfix", "off", "--timeout", "1s", "diverge.py"}, 124, "] divergence"},
		{"watch", "", []string{"exec", "--watch", "x < 100", "diverge.py"}, 3, "constraint"},
		{"badWatch", "", []string{"exec", "--watch", "x <", "diverge.py"}, 2, "watch"},
		{"badHotfix", "", []string{"exec", "--hotfix", "maybe", "diverge.py"}, 2, `hotfix "maybe"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := labmate(t, dir, c.stdin, c.args...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q), stdout %q", code, c.code, errOut, c.want, out)
			}
		})
	}
}

func TestExecCtrlCInterrupts(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "long.py", "import time\nfor i in range(600):\n    print(i, flush=True)\n    time.sleep(0.05)\n")
	cmd := exec.Command(bin, "exec", "long.py")
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for i := 0; i < 5 && sc.Scan(); i++ { // output is live: lines arrive while it runs
	}
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	for sc.Scan() {
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130; stderr %q", err, errb.String())
	}
	if d := time.Since(sent); d > 2*time.Second {
		t.Errorf("Ctrl-C took %v to stop the run", d)
	}
	if !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("stderr %q does not say interrupted", errb.String())
	}
}

func TestRefusesWithoutSandbox(t *testing.T) {
	noTools := []string{"PATH=" + t.TempDir()} // neither bwrap nor prlimit can be found
	out, _, code := labmateEnv(t, noTools, t.TempDir(), "", "kernels")
	if code != 1 || !strings.Contains(out, "SANDBOX: NONE AVAILABLE") || !strings.Contains(out, "--no-sandbox") {
		t.Errorf("kernels without isolation: exit %d\n%s", code, out)
	}
	_, errOut, code := labmateEnv(t, noTools, t.TempDir(), "print(1)", "exec", "--kernel", "python", "-")
	if code != 2 || !strings.Contains(errOut, "refuses to run code") {
		t.Errorf("exec without isolation: exit %d, stderr %q", code, errOut)
	}
}

func TestExecJSONNonFinite(t *testing.T) {
	out, errOut, code := labmate(t, t.TempDir(), "import math\nlabmate.log('y', math.nan)\nprint('x = inf')\n", "exec", "--json", "--hotfix", "off", "--kernel", "python", "-")
	if code != 0 || !strings.Contains(out, `"value":"NaN"`) || !strings.Contains(out, `"value":"Inf"`) || !strings.Contains(out, `"operation_complete"`) {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
}
