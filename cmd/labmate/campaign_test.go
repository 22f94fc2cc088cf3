package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/labmate/labmate/eval/campaign"
	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
)

func reactionsDir(t *testing.T) string {
	t.Helper()
	dir, err := campaign.FindReactions()
	if err != nil {
		t.Skip(err)
	}
	return dir
}

func writeSmall(t *testing.T, dir string) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("sub,lig,base,solvent,yield\n")
	y := 0
	for _, s := range []string{"A", "B", "C"} {
		for _, l := range []string{"L1", "L2", "L3"} {
			for _, ba := range []string{"B1", "B2"} {
				for _, so := range []string{"S1", "S2"} {
					y = (y*37 + 11) % 101
					b.WriteString(strings.Join([]string{s, l, ba, so, strconv.Itoa(y)}, ",") + "\n")
				}
			}
		}
	}
	return write(t, dir, "small.csv", b.String())
}

func TestCampaignRunCLI(t *testing.T) {
	dir := t.TempDir()
	data := writeSmall(t, dir)
	store := filepath.Join(dir, "c.db")
	args := []string{"campaign", "run", "--dataset", data, "--vars", "lig,base,solvent", "--group", "sub", "--turns", "5", "--seeds", "2", "--store", store}
	ref := write(t, dir, "ref.csv", "dataset,method,iteration,n_runs,mean_normalized_advantage,mean_nma,valid_fraction\n"+
		"small,gpt,1,,0.1,0.1,1\nsmall,gpt,2,,0.2,0.3,1\nother,gpt,1,,0.5,0.5,1\n")
	out, errOut, code := labmate(t, dir, "", append(args, "--planner", "random,bayes", "--json", "--plot", "curves.png", "--reference", ref)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Groups   int
		Planners []struct {
			Planner   string
			Campaigns int
			NMA       map[string]lab.Summary
			Repeats   float64 `json:"repeat_fraction"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if res.Groups != 3 || len(res.Planners) != 2 || res.Planners[1].Planner != "bayes" || res.Planners[1].Campaigns != 6 {
		t.Fatalf("summary: %+v", res)
	}
	for _, p := range res.Planners {
		if p.Repeats != 0 || p.NMA["5"].N != 6 || p.NMA["5"].Mean > 1 {
			t.Errorf("%s: %+v", p.Planner, p)
		}
	}
	if strings.Contains(errOut, "campaigns [") { // stderr is a pipe: bars are for terminals
		t.Errorf("a progress bar on a stderr that is not a terminal: %q", errOut)
	}
	png, err := os.ReadFile(filepath.Join(dir, "curves.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("--plot: %v", err)
	}

	// A memory-informed rerun reads the recorded campaigns of the other groups.
	out, errOut, code = labmate(t, dir, "", append(args, "--planner", "bayes", "--prior", "memory")...)
	if code != 0 || !strings.Contains(out, "bayes+memory") || !strings.Contains(out, "NMA@5") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
}

func TestCampaignRunErrors(t *testing.T) {
	dir := t.TempDir()
	data := writeSmall(t, dir)
	bad := write(t, dir, "bad.csv", "sub,lig,base,solvent,yield\nA,L1,B1,S1,12\nA,L1,B2,S1,high\n")
	base := []string{"campaign", "run", "--vars", "lig,base,solvent", "--group", "sub", "--store", filepath.Join(dir, "c.db")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dataset", bad}, `bad.csv:3, column "yield", value "high"`},
		{[]string{"--dataset", data, "--objective", "conversion"}, `small.csv:1, column "conversion": no objective column`},
		{[]string{"--dataset", data, "--planner", "genius"}, `unknown planner "genius"`},
		{[]string{"--dataset", data, "--prior", "intuition"}, `--prior "intuition"`},
		{[]string{"--dataset", data, "--drop", "oops"}, `--drop "oops"`},
		{[]string{"--dataset", data, "--turns", "201"}, `--turns 201: the bayes planner models at most 200 measurements`},
		{[]string{"--dataset", data, "--bench"}, `--bench: the bench maps no reaction of dataset small (it maps buchwald_hartwig_ahneman2018, buchwald_hartwig_ahneman2018_with_controls, suzuki_perera2018)`},
		{[]string{"--dataset", write(t, dir, "wide.csv", manyLevels(1001))}, `wide.csv:1002, column "lig": 1001 levels; at most 1000 are allowed`},
		{[]string{"--dataset", data, "--plot", "p.png", "--reference", write(t, dir, "r.csv", "dataset,method,iteration,mean_normalized_advantage,mean_nma\nx,y,first,0,0\n")}, `r.csv:2: column iteration: "first"`},
	} {
		_, errOut, code := labmate(t, dir, "", append(base, tc.args...)...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// manyLevels is a CSV of one group whose variable lig has n levels (base and solvent one each).
func manyLevels(n int) string {
	var b strings.Builder
	b.WriteString("sub,lig,base,solvent,yield\n")
	for i := range n {
		fmt.Fprintf(&b, "A,L%d,B1,S1,%d\n", i, i%100)
	}
	return b.String()
}

func TestCampaignRunLLMPlanner(t *testing.T) {
	dir := t.TempDir()
	data := writeSmall(t, dir)
	moves := [][2]string{{"L1", "B1"}, {"L2", "B2"}, {"L3", "B1"}}
	var turns []llmtest.Turn
	for range 3 * 3 { // 3 groups × 3 turns
		turns = append(turns, llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			n := 0
			for _, m := range c.Request.Messages {
				if m.Role == llm.RoleAssistant {
					n++
				}
			}
			if n == 1 {
				return llmtest.Text("I would rather not answer in JSON") // costs a turn
			}
			mv := moves[n]
			return llmtest.JSON(map[string]any{"observation": "trying " + mv[0], "choice": map[string]string{"lig": mv[0], "base": mv[1], "solvent": "S1"}})
		}})
	}
	srv := llmtest.NewServer(t, turns...)
	env := modelEnv(t, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test")
	out, errOut, code := labmateEnv(t, env, dir, "", "campaign", "run", "--dataset", data, "--vars", "lig,base,solvent", "--group", "sub",
		"--planner", "llm", "--model", "openai:gpt-test", "--turns", "3", "--seeds", "1", "--store", filepath.Join(dir, "c.db"), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Planners []struct {
			Planner   string
			Campaigns int
			Invalid   float64 `json:"invalid_fraction"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Planners) != 1 || res.Planners[0].Campaigns != 3 || math.Abs(res.Planners[0].Invalid-1.0/3) > 1e-9 {
		t.Errorf("summary %+v, want 3 campaigns with one invalid turn in three", res.Planners)
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d scripted turns left", srv.Remaining())
	}
	// Without any model configured, a clear one-line error.
	_, errOut, code = labmateEnv(t, modelEnv(t), dir, "", "campaign", "run", "--dataset", data, "--vars", "lig,base,solvent", "--group", "sub",
		"--planner", "llm", "--store", filepath.Join(dir, "c.db"))
	if code == 0 || !strings.Contains(errOut, "no model configured") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
