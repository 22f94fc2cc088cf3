package agent_test

import (
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm/llmtest"
)

// A figure the cell saves is told to the reviewer (and the rest of the run) as a file written,
// with its type and size, and is in the operation's outcome.
func TestArtifactsReachTheModel(t *testing.T) {
	srv := llmtest.NewServer(t,
		agenttest.Plan("plot", "plot y = x^2 to fig.png with matplotlib", "fig.png exists"),
		agenttest.RunCode("import matplotlib.pyplot as plt\nplt.plot([0, 1, 2], [0, 1, 4])\nplt.savefig('fig.png')\nprint('saved')"),
		expect(t, "reflect", accept("fig.png written"), "file written: fig.png (image/png, "),
		agenttest.FinalAnswer("fig.png"),
	)
	a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, &agent.Task{Goal: "Plot y = x^2.", Kernel: "python"})
	if err != nil {
		t.Fatal(err)
	}
	ops := outcomes(evs)
	if len(ops) != 1 || !ops[0].OK || len(ops[0].Artifacts) != 1 || ops[0].Artifacts[0].Path != "fig.png" ||
		ops[0].Artifacts[0].MIMEType != "image/png" || ops[0].Artifacts[0].Size == 0 {
		t.Fatalf("operations = %+v, want one that wrote fig.png", ops)
	}
	if n := srv.Remaining(); n != 0 {
		t.Errorf("%d scripted turns were not used", n)
	}
}
