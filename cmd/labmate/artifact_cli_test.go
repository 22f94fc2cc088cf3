package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/protocol"
)

// plotPy is a Python cell that saves a figure and a table.
const plotPy = `import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([0, 1, 2, 3, 4, 5], [1.0, 0.6, 0.36, 0.22, 0.13, 0.08])
plt.savefig("fig.png")
open("energy.csv", "w").write("t,E\n0,1.0\n5,0.08\n")
print("saved")
`

// takeFiles reads the files named under root (anywhere below it) and removes them, as a
// reaped workspace loses them; each must be there once.
func takeFiles(t *testing.T, root string, names ...string) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		for _, n := range names {
			if d.Name() == n {
				if _, twice := got[n]; twice {
					t.Errorf("%s twice under %s", n, root)
				}
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				got[n] = b
				os.Remove(p)
			}
		}
		return nil
	})
	for _, n := range names {
		if len(got[n]) == 0 {
			t.Fatalf("no %s under %s", n, root)
		}
	}
	return got
}

// wantArtifact runs labmate ARGS… --artifact PATH for each file and checks it writes the
// same bytes; then a path that was not reported is an error naming it and what was.
func wantArtifact(t *testing.T, data string, files map[string][]byte, reported string, args ...string) {
	t.Helper()
	for name, want := range files {
		out, errOut, code := labmate(t, t.TempDir(), "", append(args, "--data", data, "--artifact", name)...)
		if code != 0 || !bytes.Equal([]byte(out), want) {
			t.Errorf("labmate %s --artifact %s: exit %d, %d bytes (want %d), stderr %q", strings.Join(args, " "), name, code, len(out), len(want), errOut)
		}
	}
	out, errOut, code := labmate(t, t.TempDir(), "", append(args, "--data", data, "--artifact", "fig.jpg")...)
	if code != 2 || out != "" || !strings.Contains(errOut, "--artifact fig.jpg: ") || !strings.Contains(errOut, "it reported "+reported) {
		t.Errorf("labmate %s --artifact fig.jpg: exit %d, stdout %q, stderr %q; want an error naming the path and %s", strings.Join(args, " "), code, out, errOut, reported)
	}
}

// TestSessionArtifactExec: a labmate exec cell's figure and table are kept in DATA/artifacts;
// exec says which session keeps them, session list and show find it by its file, and session
// show ID --artifact PATH writes the same bytes once the workspace has lost them.
func TestSessionArtifactExec(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	write(t, dir, "plot.py", plotPy)
	out, errOut, code := labmate(t, dir, "", "exec", "--data", data, "plot.py")
	m := regexp.MustCompile(`labmate: artifacts kept in session (\S+): labmate session show (\S+) --artifact energy.csv gives one back\n`).FindStringSubmatch(errOut)
	if code != 0 || out != "saved\n" || m == nil || m[1] != m[2] {
		t.Fatalf("exec: exit %d, stdout %q, stderr %q; want the session that keeps the artifacts", code, out, errOut)
	}
	session := m[1]
	files := takeFiles(t, dir, "fig.png", "energy.csv")
	if !bytes.HasPrefix(files["fig.png"], []byte("\x89PNG")) {
		t.Fatalf("fig.png is not a PNG: %q", files["fig.png"][:8])
	}
	wantArtifact(t, data, files, "energy.csv, fig.png", "session", "show", session)

	out, errOut, code = labmate(t, dir, "", "session", "list", "--data", data)
	if code != 0 || !regexp.MustCompile(session+` +cells +1 +\S+ \S+ +plot.py\n`).MatchString(out) {
		t.Errorf("session list: exit %d, %q %s; want %s, 1 operation, plot.py", code, out, errOut, session)
	}
	out, errOut, code = labmate(t, dir, "", "session", "show", session, "--data", data)
	for _, want := range []string{"session " + session + ": plot.py\n", "operations (1):\n", " exec ", "COMPLETED",
		"artifacts (2; labmate session show " + session + " --artifact PATH writes one):\n", "fig.png ", "image/png", "energy.csv ", "text/csv ", " kept\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("session show: exit %d, stdout lacks %q:\n%s%s", code, want, out, errOut)
		}
	}
	out, errOut, code = labmate(t, dir, "", "session", "show", session, "--data", data, "--json")
	var show sessionShow
	if err := json.Unmarshal([]byte(out), &show); err != nil || code != 0 || show.Session.Title != "plot.py" || len(show.Operations) != 1 ||
		len(show.Artifacts) != 2 || show.Artifacts[0].Path != "energy.csv" || len(show.Artifacts[0].SHA256) != 64 {
		t.Errorf("session show --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	for _, c := range []struct{ args, want []string }{
		{[]string{"session", "show", "nosuch", "--data", data}, []string{`session "nosuch": not in the log ` + data, "labmate session list"}},
		{[]string{"session", "show", session, "--data", data, "--artifact", "../etc/passwd"}, []string{"--artifact: ", "../etc/passwd"}},
		{[]string{"session", "list", "--data", t.TempDir()}, []string{"has no log (labmate.db)"}},
		{[]string{"session", "shwo"}, []string{"show"}},
	} {
		out, errOut, code := labmate(t, dir, "", c.args...)
		for _, w := range c.want {
			if code != 2 || out != "" || !strings.Contains(errOut, w) {
				t.Errorf("labmate %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errOut, w)
			}
		}
	}
}

// TestArtifactsAfterServer: the artifacts of a labmate exec --server cell, of a cell run as the
// dashboard runs one (POST /v1/sessions/ID/operations) and of a job the server followed are
// given back by session show and job status --artifact after the server has stopped and its
// workspaces are gone.
func TestArtifactsAfterServer(t *testing.T) {
	data := t.TempDir()
	cmd, url := serve(t, data)
	dir := t.TempDir()
	write(t, dir, "plot.py", plotPy)
	out, errOut, code := labmate(t, dir, "", "exec", "--server", url, "--data", data, "--session", "plots", "plot.py")
	if code != 0 || out != "saved\n" || !strings.Contains(errOut, "labmate: artifacts kept in session plots: on the server's machine, labmate session show plots --artifact energy.csv gives one back\n") {
		t.Fatalf("exec --server: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	cell, _ := json.Marshal(protocol.Request{Kind: "exec", Kernel: "python", Code: "open('table.csv', 'w').write('x,y\\n1,2\\n')\nprint('ok')\n"})
	if resp, body := request(t, http.MethodPost, url, "/v1/sessions/notebook/operations", string(cell)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/sessions/notebook/operations: %d %s", resp.StatusCode, body)
	}
	resp, body := request(t, http.MethodPost, url, "/v1/jobs", `{"name": "tab", "script": "printf 'step,T\\n1,300\\n' > job.csv"}`)
	var sub map[string]string
	if err := json.Unmarshal([]byte(body), &sub); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs: %d %s", resp.StatusCode, body)
	}
	waitJobOp(t, url, sub["id"])
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var ops []protocol.OperationInfo
		getJSON(t, url+"/v1/sessions/notebook/operations", &ops)
		if slices.ContainsFunc(ops, func(o protocol.OperationInfo) bool { return o.Kind == "exec" && o.State.Terminal() }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard's cell did not end: %+v", ops)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	cells := takeFiles(t, filepath.Join(data, "workspaces"), "fig.png", "energy.csv", "table.csv", "job.csv")
	wantArtifact(t, data, map[string][]byte{"fig.png": cells["fig.png"], "energy.csv": cells["energy.csv"]}, "energy.csv, fig.png", "session", "show", "plots")
	wantArtifact(t, data, map[string][]byte{"table.csv": cells["table.csv"]}, "table.csv", "session", "show", "notebook")
	wantArtifact(t, data, map[string][]byte{"job.csv": cells["job.csv"]}, "job.csv", "job", "status", sub["id"])
}

// TestJobArtifactNoServer: a job submitted with labmate job submit and no other labmate
// process has its artifacts kept by its supervisor when it ends, so job status ID --artifact
// PATH (and job logs ID --artifact PATH) writes them after its workspace has gone; a running job's are refused, saying when
// they are kept.
func TestJobArtifactNoServer(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	write(t, dir, "plot.py", "import time\ntime.sleep(1.5)\n"+plotPy)
	out, errOut, code := jobCLI(t, data, dir, "", "submit", "--name", "plot", "--", "python3", "plot.py")
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "local-") {
		t.Fatalf("job submit: exit %d, %q %s", code, out, errOut)
	}
	out, errOut, code = jobCLI(t, data, dir, "", "status", id, "--artifact", "fig.png")
	if code != 2 || out != "" || !strings.Contains(errOut, "--artifact fig.png: job "+id+" is ") || !strings.Contains(errOut, "kept when it ends") {
		t.Errorf("status --artifact of a running job: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if st := untilEnded(t, data, id, 60*time.Second); st.State != "COMPLETED" {
		t.Fatalf("job %s: %s %s", id, st.State, st.Reason)
	}
	files := takeFiles(t, dir, "fig.png", "energy.csv")
	if _, err := os.Stat(filepath.Join(data, "labmate.db")); err == nil {
		t.Fatal("a labmate process logged the job: this test is of a job nobody but its supervisor watched")
	}
	wantArtifact(t, data, files, "energy.csv, fig.png", "job", "status", id)
	wantArtifact(t, data, files, "energy.csv, fig.png", "job", "logs", id) // the same, from job logs
	out, errOut, code = jobCLI(t, data, dir, "", "logs", "-f", id, "--artifact", "fig.png")
	if code != 2 || out != "" || !strings.Contains(errOut, "--artifact fig.png writes the file to standard output instead of the log") {
		t.Errorf("logs -f --artifact: exit %d, stdout %q, stderr %q; want it refused, saying why", code, out, errOut)
	}
}
