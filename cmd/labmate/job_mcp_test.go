package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/job"
)

// labmate mcp serves the job tools over the jobs of DATA: a job an MCP client submits is the
// one labmate job sees, and waits for. Its workspace is the server's: an absolute one is
// refused.
func TestJobMCPStdioSharesTheJobs(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	cmd := exec.Command(bin, "mcp", "--workspaces", t.TempDir(), "--data", data, "--prewarm", "")
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "submit_job",
		Arguments: map[string]any{"workspace": ws, "name": "from-mcp", "command": []string{"echo", "hello from mcp"}}})
	if err != nil || !res.IsError {
		t.Fatalf("submit_job in %s: %v %+v: want it refused", ws, err, res)
	}
	res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "submit_job",
		Arguments: map[string]any{"workspace": "run", "name": "from-mcp", "command": []string{"echo", "hello from mcp"}}})
	if err != nil || res.IsError {
		t.Fatalf("submit_job: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var st job.Status
	if err := json.Unmarshal(b, &st); err != nil || st.Name != "from-mcp" {
		t.Fatalf("submit_job's status: %v %s", err, b)
	}
	if _, errOut, code := jobCLI(t, data, ws, "", "wait", string(st.ID)); code != 0 {
		t.Fatalf("labmate job wait %s: exit %d, %s", st.ID, code, errOut)
	}
	if out, _, _ := jobCLI(t, data, ws, "", "logs", string(st.ID)); out != "hello from mcp\n" {
		t.Errorf("labmate job logs: %q", out)
	}
}
