package agent_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if testing.Verbose() {
		fmt.Printf("\ninput tokens per module call (estimated by the fake server at ~4 bytes/token):\n%s", promptReport())
	}
	os.Exit(code)
}

// bugThenFix is must-hold 1 for a kernel: a cell with a bug fails, the code module repairs it,
// the repaired cell succeeds, the step is accepted and the answer given.
func bugThenFix(t *testing.T, model func(*llmtest.Server) llm.Model, kernelName, bug, wantErr, fix string) []*agent.Event {
	srv := llmtest.NewServer(t,
		agenttest.Plan("compute x", "compute x = 41 + 1 and print it", "x = 42"),
		agenttest.RunCode(bug),
		expect(t, "code", agenttest.RunCode(fix), "FAILED", wantErr, "repair 1 of 3"),
		expect(t, "reflect", accept("x = 42"), "x = 42", "Checkpoint: x = 42"),
		expect(t, "code", agenttest.FinalAnswer("x = 42"), "Every step of the plan is done", "compute x: x = 42"),
	)
	a, err := agent.New(model(srv), &agent.Options{StartKernel: testutil.Kernels(t)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, &agent.Task{Goal: "What is 41 + 1? Compute it.", Kernel: kernelName})
	if err != nil {
		t.Fatal(err)
	}
	s := stopOf(t, evs)
	if s.Reason != agent.StopAnswered || s.Result == nil || s.Result.Text != "x = 42" {
		t.Fatalf("stop = %+v, want answered x = 42; events: %s", s, types(evs))
	}
	ops := outcomes(evs)
	if len(ops) != 2 || ops[0].OK || ops[0].Reason != "error" || !ops[1].OK || !strings.Contains(ops[1].Output, "42") {
		t.Fatalf("operations = %+v, want a failure then a success printing 42", ops)
	}
	if s.Stats.Repairs != 1 || s.Stats.Operations != 2 || s.Stats.Replans != 0 {
		t.Errorf("stats = %+v, want 1 repair, 2 operations, 0 re-plans", s.Stats)
	}
	if n := srv.Remaining(); n != 0 {
		t.Errorf("%d scripted turns were not used", n)
	}
	return evs
}

// Must hold 1: a cell with a bug → error → repair → success, in Python and in Octave.
func TestBugErrorRepairSuccess(t *testing.T) {
	t.Run("python", func(t *testing.T) {
		evs := bugThenFix(t, openAIModel, "python", "x = undefined_thing + 1\nprint('x =', x)", "NameError", "x = 41 + 1\nprint('x =', x)")
		recordPrompts(t, "1-bug-repair(python)", evs)
	})
	t.Run("octave", func(t *testing.T) {
		evs := bugThenFix(t, openAIModel, "octave", "x = undefined_thing + 1", "undefined", "x = 41 + 1")
		recordPrompts(t, "1-bug-repair(octave)", evs)
	})
}

// Must hold 8: both wire formats drive the same scenario — the Anthropic adapter on the
// Messages API, like the OpenAI-compatible one above.
func TestBothWireFormats(t *testing.T) {
	for _, c := range []struct {
		name  string
		model func(*llmtest.Server) llm.Model
	}{{"openai", openAIModel}, {"anthropic", anthropicModel}} {
		t.Run(c.name, func(t *testing.T) {
			evs := bugThenFix(t, c.model, "python", "x = undefined_thing + 1\nprint('x =', x)", "NameError", "x = 41 + 1\nprint('x =', x)")
			recordPrompts(t, "8-wire("+c.name+")", evs)
		})
	}
}

// Must hold 5a: the provider rate-limits (429 with Retry-After) and then answers; later a 503
// mid-run: the retries are invisible to the run, which completes.
func TestRateLimitedThenSuccess(t *testing.T) {
	limited := llmtest.Fail(429, "rate limit reached for requests")
	limited.RetryAfter = 300 * time.Millisecond
	srv := llmtest.NewServer(t,
		limited,
		agenttest.Plan("compute x", "compute x = 41 + 1 and print it", "x = 42"),
		llmtest.Fail(503, "overloaded"),
		agenttest.RunCode("x = 41 + 1\nprint('x =', x)"),
		accept("x = 42"),
		agenttest.FinalAnswer("x = 42"),
	)
	model := llm.WithRetry(openAIModel(srv), &llm.RetryOptions{BaseDelay: 20 * time.Millisecond, MaxAttempts: 3})
	a, err := agent.New(model, &agent.Options{StartKernel: testutil.Kernels(t)})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	evs, err := run(t, a, &agent.Task{Goal: "What is 41 + 1?", Kernel: "python"})
	if err != nil {
		t.Fatal(err)
	}
	if s := stopOf(t, evs); s.Reason != agent.StopAnswered || s.Result.Text != "x = 42" || s.Stats.Turns != 4 {
		t.Fatalf("stop = %+v, want answered in 4 turns (the retries inside them)", s)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("the run took %v: the Retry-After of 300ms was not honoured", d)
	}
	if n := len(srv.Calls()); n != 6 {
		t.Errorf("%d HTTP calls, want 6 (4 turns + 2 retries)", n)
	}
	// Down for good: the retries give up and the run fails cleanly, saying why.
	down := llmtest.NewServer(t)
	down.Close()
	a, err = agent.New(llm.WithRetry(openAIModel(down), &llm.RetryOptions{BaseDelay: 10 * time.Millisecond, MaxAttempts: 2}), nil)
	if err != nil {
		t.Fatal(err)
	}
	evs, err = run(t, a, &agent.Task{Goal: "anything"})
	if !errors.Is(err, llm.ErrUnavailable) || stopOf(t, evs).Reason != agent.StopError {
		t.Errorf("provider down: %v, stop %+v", err, stopOf(t, evs))
	}
}

// An explicit Euler integration of y' = -50 y, 300 steps of 10 ms each: unstable at dt = 0.06
// (|1 - 50 dt| = 2, so |y| doubles every step), stable at dt = 0.01.
const (
	eulerUnstable = "import time\ndt = 0.06\ny = 1.0\nfor n in range(300):\n    y = y + dt * (-50 * y)\n    print('y =', y, flush=True)\n    time.sleep(0.01)\nprint('final y =', y)"
	eulerStable   = "import time\ndt = 0.01\ny = 1.0\nfor n in range(100):\n    y = y + dt * (-50 * y)\n    print('y =', y, flush=True)\n    time.sleep(0.01)\nprint('final y =', y)"
)

// Must hold 2: a diverging simulation is interrupted by perception mid-run, repaired with a
// smaller step and succeeds — in less wall time than when the diverging run is let run to its
// end (and then repaired after the review).
func TestDivergingInterruptedRepairedFaster(t *testing.T) {
	task := &agent.Task{Goal: "Integrate y' = -50 y, y(0) = 1 with explicit Euler and report y at the end.", Kernel: "python"}
	plan := agenttest.Plan("integrate", "explicit Euler, print y each step", "y decays to ~0 and stays finite")

	// With the Hot-Fix: perception stops the run as soon as |y| explodes.
	srv := llmtest.NewServer(t,
		plan,
		agenttest.RunCode(eulerUnstable, "finite(y)"),
		expect(t, "code", agenttest.RunCode(eulerStable, "finite(y)"), "INTERRUPTED by perception", "perception: Error"),
		expect(t, "reflect", accept("y decays to 0 with dt = 0.01"), "final y ="),
		agenttest.FinalAnswer("y(2) ≈ 0 (dt = 0.01)"),
	)
	a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t), NoJudge: true})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, task)
	if err != nil {
		t.Fatal(err)
	}
	hot := stopOf(t, evs)
	ops := outcomes(evs)
	if hot.Reason != agent.StopAnswered || len(ops) != 2 || !ops[0].HotFix || ops[0].Verdict == nil || !ops[1].OK {
		t.Fatalf("hot-fix run: stop %+v, operations %+v", hot, ops)
	}
	if ops[0].DurationS > 2 {
		t.Errorf("the diverging run was stopped only after %.2fs", ops[0].DurationS)
	}
	if hot.Stats.HotFixes != 1 {
		t.Errorf("hot-fixes = %d, want 1", hot.Stats.HotFixes)
	}
	recordPrompts(t, "2-diverging(hot-fix)", evs)

	// Without it (hotfix off on the first cell): the run goes to its end, the review sees the
	// explosion and asks for an adjustment.
	srv = llmtest.NewServer(t,
		plan,
		llmtest.CallTool(agent.ToolRunCode, agenttest.Args(agent.RunCode{Code: eulerUnstable, Hotfix: "off"})),
		expect(t, "reflect", llmtest.JSON(map[string]string{"decision": "adjust", "reasons": "|y| grew to 1e90: explicit Euler is unstable at dt = 0.06", "fix": "dt = 0.01"}), "final y ="),
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			if brief := c.Request.Messages[0].Content; !strings.Contains(brief, "The reviewer asked for an adjustment") || !strings.Contains(brief, "Fix: dt = 0.01") {
				t.Errorf("the code module is not told the review's fix:\n%s", brief)
			}
			return agenttest.RunCode(eulerStable, "finite(y)")
		}},
		accept("y decays to 0 with dt = 0.01"),
		agenttest.FinalAnswer("y(2) ≈ 0 (dt = 0.01)"),
	)
	a, err = agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t), NoJudge: true})
	if err != nil {
		t.Fatal(err)
	}
	evs, err = run(t, a, task)
	if err != nil {
		t.Fatal(err)
	}
	let := stopOf(t, evs)
	if let.Reason != agent.StopAnswered || len(outcomes(evs)) != 2 || !outcomes(evs)[0].OK {
		t.Fatalf("let-it-run: stop %+v, operations %+v", let, outcomes(evs))
	}
	recordPrompts(t, "2-diverging(let run)", evs)
	t.Logf("wall time to a correct answer: %v with the Hot-Fix (diverging cell stopped after %.2fs), %v letting it run (%.2fs)",
		hot.Stats.Elapsed.Round(time.Millisecond), ops[0].DurationS, let.Stats.Elapsed.Round(time.Millisecond), outcomes(evs)[0].DurationS)
	if hot.Stats.Elapsed >= let.Stats.Elapsed {
		t.Errorf("the hot-fixed run took %v, letting it run %v: no faster", hot.Stats.Elapsed, let.Stats.Elapsed)
	}
}

// Must hold 3: the reflect module finds the plan wrong and the run re-plans globally.
func TestReflectionTriggersReplan(t *testing.T) {
	linear := "import numpy as np\nx = np.linspace(0, 1, 50)\ny = 3 * x**2 + 1\np = np.polyfit(x, y, 1)\nr = y - np.polyval(p, x)\nprint('r2 =', round(1 - r.var() / y.var(), 4))"
	quad := strings.Replace(linear, "polyfit(x, y, 1)", "polyfit(x, y, 2)", 1) + "\nprint('coefficients =', np.round(p, 3))"
	srv := llmtest.NewServer(t,
		agenttest.Plan("linear fit", "fit y = a x + b by least squares", "R^2 > 0.99"),
		agenttest.RunCode(linear),
		expect(t, "reflect", llmtest.JSON(map[string]string{"decision": "replan", "reasons": "R^2 = 0.94 < 0.99: the data are curved, a linear model is wrong"}), "r2 = 0.9"),
		expect(t, "plan", agenttest.Plan("quadratic fit", "fit y = a x^2 + b x + c", "R^2 > 0.99"), "The previous plan failed", "a linear model is wrong"),
		agenttest.RunCode(quad),
		expect(t, "reflect", accept("y = 3 x^2 + 1 fits exactly (R^2 = 1)"), "r2 = 1.0", "coefficients = [3."),
		agenttest.FinalAnswer("y = 3 x^2 + 1"),
	)
	a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, &agent.Task{Goal: "Find the law behind the data x = linspace(0,1,50), y = 3x^2 + 1.", Kernel: "python"})
	if err != nil {
		t.Fatal(err)
	}
	s := stopOf(t, evs)
	var decisions []agent.Decision
	for _, e := range of(evs, agent.EventReflection) {
		decisions = append(decisions, e.Reflection.Decision)
	}
	if s.Reason != agent.StopAnswered || len(of(evs, agent.EventPlan)) != 2 || s.Stats.Replans != 1 ||
		fmt.Sprint(decisions) != "[replan accept]" {
		t.Fatalf("stop %+v, plans %d, decisions %v", s, len(of(evs, agent.EventPlan)), decisions)
	}
	recordPrompts(t, "3-replan", evs)
}

// Must hold 4: a malformed plan, malformed tool arguments, an unknown tool and a schema
// violation: each time the model is told precisely what was wrong, and the run goes on.
func TestMalformedModelOutputIsExplained(t *testing.T) {
	badTool := agent.Plan{Goal: "g", Steps: []agent.Step{{Title: "s", Action: "a", Tool: "matlab", Checkpoint: "c"}}}
	srv := llmtest.NewServer(t,
		llmtest.Text("Sure! Here is the plan: {steps: ["),
		expect(t, "plan", llmtest.JSON(badTool), "not valid JSON", "Answer again"),
		expect(t, "plan", agenttest.Plan("answer", "compute 6 + 1", "answer = 7"), `tool "matlab" does not exist; the tools are: run_code, final_answer`),
		llmtest.CallTool(agent.ToolRunCode, `{"code": "print(1)"`),
		expect(t, "code", llmtest.CallTool("execute_python", `{"code": "print(1)"}`), "run_code: the arguments are not valid JSON"),
		expect(t, "code", llmtest.CallTool(agent.ToolRunCode, `{"code": 5}`), `there is no tool named "execute_python"; the tools are: run_code, final_answer`),
		expect(t, "code", llmtest.CallTool(agent.ToolRunCode, `{"code": "print('answer =', 6 + 1)", "colour": "red"}`), "run_code: the arguments do not match the schema"),
		expect(t, "code", agenttest.RunCode("print('answer =', 6 + 1)"), "colour"),
		expect(t, "reflect", accept("answer = 7"), "answer = 7"),
		agenttest.FinalAnswer("7"),
	)
	a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, &agent.Task{Goal: "What is 6 + 1?", Kernel: "python"})
	if err != nil {
		t.Fatal(err)
	}
	s := stopOf(t, evs)
	if s.Reason != agent.StopAnswered || s.Result.Text != "7" {
		t.Fatalf("stop = %+v; events %s", s, types(evs))
	}
	var rejected int
	for _, e := range of(evs, agent.EventToolResult) {
		if e.Tool.IsError && e.Tool.Operation == nil {
			rejected++
		}
	}
	if rejected != 4 || len(outcomes(evs)) != 1 {
		t.Errorf("%d rejected tool calls and %d operations, want 4 and 1", rejected, len(outcomes(evs)))
	}
	recordPrompts(t, "4-malformed", evs)
}

// Must hold 5b: a provider that is down fails the run at once, cleanly, saying so.
func TestProviderDown(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Close()
	a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t)})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	evs, err := run(t, a, &agent.Task{Goal: "anything", Kernel: "python"})
	if !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("Run ended with %v, want ErrUnavailable", err)
	}
	s := stopOf(t, evs)
	if s.Reason != agent.StopError || !strings.Contains(s.Error, "plan module") || !strings.Contains(s.Error, "unavailable") {
		t.Errorf("stop = %+v, want an error naming the module and the provider's state", s)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("failing took %v", d)
	}
}

// Must hold 6: the token budget runs out mid-run: a clean stop with what was established.
func TestBudgetExhaustedStopsWithPartialResult(t *testing.T) {
	u := llm.Usage{InputTokens: 900, OutputTokens: 100}
	plan := llmtest.JSON(agent.Plan{Goal: "two values", Steps: []agent.Step{
		{Title: "a", Action: "compute a", Tool: agent.ToolRunCode, Checkpoint: "a = 1"},
		{Title: "b", Action: "compute b", Tool: agent.ToolRunCode, Checkpoint: "b = 2"},
	}})
	plan.Usage = u
	code := agenttest.RunCode("a = 1\nprint('a =', a)")
	code.Usage = u
	refl := accept("a = 1")
	refl.Usage = u
	srv := llmtest.NewServer(t, plan, code, refl) // the fourth call is refused by the budget
	a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t), Budget: 2500})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, &agent.Task{Goal: "compute a and b", Kernel: "python"})
	if err != nil {
		t.Fatalf("a budget stop is clean, yet Run returned %v", err)
	}
	s := stopOf(t, evs)
	if s.Reason != agent.StopBudget || s.Result == nil || !s.Result.Partial || !strings.Contains(s.Result.Text, "a: a = 1") {
		t.Fatalf("stop = %+v (result %+v), want a budget stop with a's result", s, s.Result)
	}
	if len(srv.Calls()) != 3 {
		t.Errorf("%d model calls, want 3", len(srv.Calls()))
	}
	var total int64
	for _, m := range s.Stats.Modules {
		total += m.Total()
	}
	if total != 3000 {
		t.Errorf("spent %d tokens, want 3000", total)
	}
}

// The perceive module: an ambiguous window (exponential growth, a Warning) is escalated to the
// model, whose Error verdict makes the Hot-Fix interrupt the run.
func TestJudgeEscalation(t *testing.T) {
	growth := "import time\nx = 1.0\nfor n in range(100):\n    x = 2 * x\n    print('x =', x, flush=True)\n    time.sleep(0.1)"
	srv := llmtest.NewServer(t,
		agenttest.Plan("grow", "iterate x = 2x", "x stays bounded"),
		agenttest.RunCode(growth),
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			if c.Request.Output == nil || c.Request.Output.Name != "judgement" || !strings.Contains(lastMessage(c).Content, "x = ") {
				t.Errorf("call %d is not a judgement of the window: %+v", c.N, c.Request)
			}
			return llmtest.JSON(map[string]string{"state": "Error", "reason": "x doubles every step without bound"})
		}},
		expect(t, "code", agenttest.FinalAnswer("x diverges"), "INTERRUPTED", "judge"),
	)
	a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, &agent.Task{Goal: "Does x = 2x stay bounded?", Kernel: "python"})
	if err != nil {
		t.Fatal(err)
	}
	ops := outcomes(evs)
	if len(ops) != 1 || !ops[0].HotFix || ops[0].Verdict == nil || ops[0].Verdict.Detector != "judge" {
		t.Fatalf("operations %+v, want one stopped on the judge's verdict", ops)
	}
	var judged int
	for _, e := range of(evs, agent.EventModelCall) {
		if e.Call.Module == "perceive" {
			judged++
		}
	}
	if judged != 1 {
		t.Errorf("%d perceive calls, want 1", judged)
	}
	recordPrompts(t, "judge", evs)
}

// The baselines: direct answers with one call and no tools; codeact runs code without
// perception, Hot-Fix, plan or reflection.
func TestBaselines(t *testing.T) {
	srv := llmtest.NewServer(t, expect(t, "direct", llmtest.Text("42"), "What is 6 * 7?"))
	a, err := agent.New(openAIModel(srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, &agent.Task{Goal: "What is 6 * 7?", Mode: agent.ModeDirect})
	if err != nil || stopOf(t, evs).Result.Text != "42" || len(srv.Calls()[0].Request.Tools) != 0 {
		t.Fatalf("direct: %v, events %s", err, types(evs))
	}

	srv = llmtest.NewServer(t,
		llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			if len(c.Request.Tools) == 0 || c.Request.Output != nil {
				t.Errorf("codeact's call has no tools or asks for a schema: %+v", c.Request)
			}
			return agenttest.RunCode(eulerUnstable)
		}},
		expect(t, "codeact", llmtest.Text("y diverges"), "final y ="),
	)
	a, err = agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err = run(t, a, &agent.Task{Goal: "Integrate y' = -50 y with dt = 0.06", Mode: agent.ModeCodeAct})
	if err != nil {
		t.Fatal(err)
	}
	s := stopOf(t, evs)
	if s.Result.Text != "y diverges" || len(of(evs, agent.EventPlan))+len(of(evs, agent.EventReflection))+len(of(evs, agent.EventVerdict)) != 0 {
		t.Errorf("codeact: stop %+v, events %s", s, types(evs))
	}
	if ops := outcomes(evs); len(ops) != 1 || !ops[0].OK {
		t.Errorf("codeact ran %+v; without the Hot-Fix the diverging cell runs to its end", ops)
	}
	recordPrompts(t, "codeact", evs)
}

// Keeping context lean: a long output reaches the model as its first and last lines, and in a
// step's repairs only the two latest results stay whole.
func TestContextStaysLean(t *testing.T) {
	noisy := "for i in range(500):\n    print('line', i, 'of a long and noisy output')\nraise ValueError('bad')"
	var sizes []int
	measure := func(turn llmtest.Turn) llmtest.Turn {
		return llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
			n := 0
			for _, m := range c.Request.Messages {
				n += len(m.Content)
			}
			sizes = append(sizes, n)
			last := lastMessage(c).Content
			if n := strings.Count(last, "lines elided"); n != 1 {
				t.Errorf("call %d: the last result has %d elision markers, want 1", c.N, n)
			}
			// The head (the set-up) and the tail (the last values, the error) are kept, the cut said.
			for _, want := range []string{"line 0 of", "lines elided (", "line 499 of", "ValueError: bad"} {
				if !strings.Contains(last, want) {
					t.Errorf("call %d: the last result lacks %q:\n%s", c.N, want, last)
				}
			}
			return turn
		}}
	}
	srv := llmtest.NewServer(t,
		agenttest.Plan("noise", "print a lot", "no error"),
		agenttest.RunCode(noisy),
		measure(agenttest.RunCode(noisy)),
		measure(agenttest.RunCode(noisy)),
		measure(agenttest.RunCode(noisy)),
		measure(agenttest.RunCode("print('quiet')")),
		accept("quiet"),
		agenttest.FinalAnswer("quiet"),
	)
	a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t), MaxRepairs: 5})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, &agent.Task{Goal: "print a lot", Kernel: "python"})
	if err != nil {
		t.Fatal(err)
	}
	if s := stopOf(t, evs); s.Reason != agent.StopAnswered {
		t.Fatalf("stop %+v", s)
	}
	// A failed run's result costs its full size while it is among the two latest; from the third
	// on, each new result is offset by the oldest shrinking to a few lines.
	full, later := sizes[1]-sizes[0], max(sizes[2]-sizes[1], sizes[3]-sizes[2])
	if sizes[0] > 4000 || later > full/2 {
		t.Errorf("code prompt sizes %v bytes: a result costs %d, later ones %d — older results are not shortened", sizes, full, later)
	}
	t.Logf("code prompt bytes across four repairs: %v", sizes)
	recordPrompts(t, "lean(4 repairs)", evs)
}

// The wall-time and turn caps stop a run cleanly, with what it had established.
func TestCaps(t *testing.T) {
	srv := llmtest.NewServer(t,
		agenttest.Plan("wait", "sleep", "done"),
		agenttest.RunCode("import time\ntime.sleep(60)"),
	)
	a, err := agent.New(openAIModel(srv), &agent.Options{StartKernel: testutil.Kernels(t), Timeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	evs, err := run(t, a, &agent.Task{Goal: "wait a minute", Kernel: "python"})
	if err != nil {
		t.Fatal(err)
	}
	if s := stopOf(t, evs); s.Reason != agent.StopTimeout || !s.Result.Partial || !strings.Contains(s.Error, "1.5s") {
		t.Errorf("stop = %+v, want a timeout naming the cap", s)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the timeout took %v to stop the run", d)
	}

	srv = llmtest.NewServer(t,
		agenttest.Plan("x", "print", "x"),
		llmtest.CallTool("nonexistent", "{}"),
		llmtest.CallTool("nonexistent", "{}"),
	)
	a, err = agent.New(openAIModel(srv), &agent.Options{MaxTurns: 3})
	if err != nil {
		t.Fatal(err)
	}
	evs, err = run(t, a, &agent.Task{Goal: "loop"})
	if err != nil {
		t.Fatal(err)
	}
	if s := stopOf(t, evs); s.Reason != agent.StopTurns || s.Stats.Turns != 3 {
		t.Errorf("stop = %+v, want max_turns after 3 calls", s)
	}
}
