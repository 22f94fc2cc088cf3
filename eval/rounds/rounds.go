// Package rounds is the memory benchmark of rounds: a family of tasks run again and again by
// the agent over real kernels, with memory learning between them, as in the memory-centric
// lifelong agent's R1–R3 (where execution feedback took a model from 44% to 75% task success).
//
// Every task of the family meets, in round 1, a failure a guardrail can prevent: explicit Euler
// with a step past its stability limit, self-consistent mixing too strong to converge — in
// Python and in Octave, for several decay rates and "materials" (slopes of the fixed-point map),
// so that a guardrail learned on one task meets chemically different ones. A control task never
// fails. The model is scripted (Policy): it plans one step, writes the cell a naive model would —
// unless memory shows it that the setting failed before, when it takes the setting memory says
// worked —, repairs a cell that failed or that the guard sent back, and accepts a result that
// ran. Each round reports, per task, the operations, Hot-Fixes, repairs, cells the guard sent
// back and prompt tokens.
//
// Transfer: the namespace one model wrote is frozen and mounted read-only for a second model
// with no memory of its own, which is compared with the same model without memory.
package rounds

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/tool"
)

// Task is one task of the family.
type Task struct {
	ID, Goal, Kernel            string
	Title, Action, Checkpoint   string
	Param, Naive, Safe          string // the parameter a naive cell gets wrong, its naive and its safe value
	Cell                        func(value string) string
	Learnable                   bool // round 1 fails in a way a guardrail prevents
	MaterialOrRate, Description string
}

func eulerPy(k int) func(string) string {
	return func(dt string) string {
		return fmt.Sprintf("import time\nk = %d\ndt = %s\ny = 1.0\nfor n in range(int(1.5 / dt)):\n    y = y + dt * (-k * y)\n    print('y =', y, flush=True)\n    time.sleep(0.01)\nprint('final y =', y)", k, dt)
	}
}

func eulerOct(k int) func(string) string {
	return func(dt string) string {
		return fmt.Sprintf("k = %d;\ndt = %s;\ny = 1.0;\nfor n = 1:round(1.5 / dt)\n  y = y + dt * (-k * y);\n  printf('y = %%g\\n', y); fflush(stdout); pause(0.01);\nend\nprintf('final y = %%g\\n', y);", k, dt)
	}
}

// scfPy is a self-consistent iteration x ← x + β (g(x) − x) with g(x) = c − a x: it converges
// when |1 − β (1 + a)| < 1.
func scfPy(a float64) func(string) string {
	return func(beta string) string {
		return fmt.Sprintf("import time\na = %g\nc = 3.0\nmixing_beta = %s\nx = 0.0\nfor it in range(40):\n    r = (c - a * x) - x\n    x = x + mixing_beta * r\n    print('x =', x, flush=True)\n    time.sleep(0.02)\n    if abs(r) < 1e-10:\n        break\nprint('converged x =', x, 'after', it, 'iterations')", a, beta)
	}
}

func scfOct(a float64) func(string) string {
	return func(beta string) string {
		return fmt.Sprintf("a = %g;\nc = 3.0;\nmixing_beta = %s;\nx = 0.0;\nfor it = 1:40\n  r = (c - a * x) - x;\n  x = x + mixing_beta * r;\n  printf('x = %%g\\n', x); fflush(stdout); pause(0.02);\n  if abs(r) < 1e-10\n    break;\n  end\nend\nprintf('converged x = %%g after %%d iterations\\n', x, it);", a, beta)
	}
}

// Tasks is the family: six tasks whose round 1 fails in a way a guardrail prevents, and a
// control that never fails.
func Tasks() []Task {
	euler := func(id, kern string, k int, cell func(int) func(string) string) Task {
		return Task{ID: id, Kernel: kern, Learnable: true, Param: "dt", Naive: "0.06", Safe: "0.01", Cell: cell(k),
			Goal:  fmt.Sprintf("Integrate the stiff decay y' = -%d y, y(0) = 1, to t = 1.5 with explicit Euler and report y at the end.", k),
			Title: "integrate the decay", Action: "explicit Euler, printing y at every step", Checkpoint: "y decays towards 0 and stays finite",
			MaterialOrRate: fmt.Sprintf("k = %d", k)}
	}
	scf := func(id, kern, mat string, a float64, cell func(float64) func(string) string) Task {
		return Task{ID: id, Kernel: kern, Learnable: true, Param: "mixing_beta", Naive: "0.9", Safe: "0.3", Cell: cell(a),
			Goal:  fmt.Sprintf("Find the self-consistent density of %s: iterate the linear-mixing SCF x <- x + mixing_beta (g(x) - x) with g(x) = 3 - %g x until the residual is below 1e-10.", mat, a),
			Title: "converge the SCF", Action: "linear mixing of the SCF iteration, printing x at every iteration", Checkpoint: "the residual falls below 1e-10 and x settles",
			MaterialOrRate: mat}
	}
	return []Task{
		euler("euler-k50-python", "python", 50, eulerPy),
		euler("euler-k80-python", "python", 80, eulerPy),
		scf("scf-al-python", "python", "Al", 2, scfPy),
		scf("scf-cu-python", "python", "Cu", 3, scfPy),
		euler("euler-k40-octave", "octave", 40, eulerOct),
		scf("scf-si-octave", "octave", "Si", 2.5, scfOct),
		{ID: "trapezoid-control-python", Kernel: "python", Goal: "Integrate sin(x) over [0, pi] with the trapezoid rule on 1001 points and report the integral.",
			Title: "integrate sin", Action: "trapezoid rule with NumPy", Checkpoint: "the integral is 2 to 1e-5", Param: "n", Naive: "1001", Safe: "1001",
			Cell: func(n string) string {
				return "import numpy as np\nn = " + n + "\nx = np.linspace(0, np.pi, n)\nf = np.sin(x)\nI = np.sum((f[1:] + f[:-1]) / 2 * np.diff(x))\nprint('I =', round(I, 8))"
			}, MaterialOrRate: "control"},
	}
}

// Policy is the scripted model's turn for any call of the agent: it finds the task from the
// prompt, plans it, writes the naive cell unless memory (shown in the step's brief) says its
// setting failed, repairs a cell that failed or was sent back with the safe setting, accepts a
// result that ran, and answers. A careless model does not read what memory shows it: only the
// guard, which sends back a cell that repeats a failing setting, protects it. It is
// deterministic: the same prompt, the same answer.
func Policy(tasks []Task, careless bool) llmtest.Turn {
	return scripted(tasks,
		func(t *Task, prompt string) (string, string) {
			return "the checkpoint is met: the result ran to its end", fmt.Sprintf("%s with %s = %s", t.Checkpoint, t.Param, valueIn(prompt, t))
		},
		func(t *Task, req *llm.Request) string {
			first, last := req.Messages[0].Content, req.Messages[len(req.Messages)-1]
			value := t.Naive
			if last.Role == llm.RoleTool && failed(last) {
				value = t.Safe // the repair
			} else if !careless && strings.Contains(first, t.Param+" = "+t.Naive+" failed") {
				value = t.Safe // memory says the naive setting failed, and what worked
			}
			return t.Cell(value)
		})
}

// scripted is a scripted model's turn for any call of the agent over tasks: it finds the task
// from the prompt's first line (its goal), plans it in one step, accepts the step with the
// reasons and summary reflect gives, and answers; the code module's cell is code's.
func scripted(tasks []Task, reflect func(t *Task, prompt string) (reasons, summary string), code func(t *Task, req *llm.Request) string) llmtest.Turn {
	return llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
		req := c.Request
		first := req.Messages[0].Content
		goal, _, _ := strings.Cut(strings.TrimPrefix(first, "Task: "), "\n") // the prompt's first line
		var task *Task
		for i := range tasks {
			if goal == tasks[i].Goal {
				task = &tasks[i]
			}
		}
		if task == nil {
			return llmtest.Text("I do not know this task")
		}
		switch {
		case strings.HasPrefix(req.System, "You are the planning module"):
			return llmtest.JSON(agent.Plan{Goal: task.Goal, Steps: []agent.Step{{Title: task.Title, Action: task.Action, Tool: agent.ToolRunCode, Checkpoint: task.Checkpoint}}})
		case strings.HasPrefix(req.System, "You are the reflection module"):
			reasons, summary := reflect(task, first)
			return llmtest.JSON(map[string]string{"decision": "accept", "reasons": reasons, "summary": summary})
		case strings.Contains(first, "Every step of the plan is done"):
			return agenttest.FinalAnswer("done: " + task.Checkpoint)
		}
		return agenttest.RunCode(code(task, req))
	}}
}

// failed says whether a tool result tells of a cell that did not run to its end.
func failed(m llm.Message) bool {
	return strings.Contains(m.Content, "NOT RUN") || strings.Contains(m.Content, "INTERRUPTED") || strings.Contains(m.Content, "FAILED")
}

// valueIn is the value of the task's parameter in the reviewed cell.
func valueIn(prompt string, t *Task) string {
	if i := strings.Index(prompt, t.Param+" = "); i >= 0 {
		v := prompt[i+len(t.Param)+3:]
		if j := strings.IndexAny(v, ";\n "); j >= 0 {
			v = v[:j]
		}
		return v
	}
	return "?"
}

// Result is one task in one round.
type Result struct {
	Round, Task                            string
	Learnable, Answered                    bool
	Operations, HotFixes, Repairs, Guarded int
	Turns                                  int
	PromptTokens                           int64
}

// Config is one agent's rounds.
type Config struct {
	Model       llm.Model
	Store       memory.Store
	StartKernel func(ctx context.Context, name string) (kernel.Kernel, error)
	// Memory is the learning loop's options; nil: no memory.
	Memory *learn.Options
}

// Round runs every task once and returns the results.
func Round(ctx context.Context, name string, cfg *Config, tasks []Task) ([]Result, error) {
	var mem agent.Memory
	var set *tool.Set
	if cfg.Memory != nil {
		m := learn.New(cfg.Store, cfg.Memory)
		var err error
		if set, err = tool.NewSet(m.Tools()...); err != nil {
			return nil, err
		}
		mem = m
	}
	a, err := agent.New(cfg.Model, &agent.Options{StartKernel: cfg.StartKernel, Memory: mem, Tools: set, NoJudge: true, MaxTurns: 20})
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, t := range tasks {
		var stop *agent.Stop
		for ev, err := range a.Run(ctx, &agent.Task{Goal: t.Goal, Kernel: t.Kernel}) {
			if err != nil {
				return out, fmt.Errorf("%s, %s: %w", name, t.ID, err)
			}
			if ev.Stop != nil {
				stop = ev.Stop
			}
		}
		r := Result{Round: name, Task: t.ID, Learnable: t.Learnable, Answered: stop.Reason == agent.StopAnswered,
			Operations: stop.Stats.Operations, HotFixes: stop.Stats.HotFixes, Repairs: stop.Stats.Repairs, Guarded: stop.Stats.Guarded, Turns: stop.Stats.Turns}
		for _, m := range stop.Stats.Modules {
			r.PromptTokens += m.InputTokens
		}
		out = append(out, r)
	}
	return out, nil
}

// Table prints results as rounds side by side: per task, operations / Hot-Fixes / repairs /
// guarded cells / prompt tokens in each round.
func Table(results []Result) string {
	var rounds []string
	byTask := map[string]map[string]Result{}
	var order []string
	for _, r := range results {
		if byTask[r.Task] == nil {
			byTask[r.Task] = map[string]Result{}
			order = append(order, r.Task)
		}
		if !slices.Contains(rounds, r.Round) {
			rounds = append(rounds, r.Round)
		}
		byTask[r.Task][r.Round] = r
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "task")
	for _, r := range rounds {
		fmt.Fprintf(tw, "\t%s ops/hot/rep/guard/tok", r)
	}
	fmt.Fprintln(tw)
	totals := map[string]*Result{}
	for _, t := range order {
		fmt.Fprint(tw, t)
		for _, rn := range rounds {
			r := byTask[t][rn]
			fmt.Fprintf(tw, "\t%d/%d/%d/%d/%d", r.Operations, r.HotFixes, r.Repairs, r.Guarded, r.PromptTokens)
			if !r.Answered {
				fmt.Fprint(tw, " (not answered)")
			}
			if totals[rn] == nil {
				totals[rn] = &Result{}
			}
			tot := totals[rn]
			tot.Operations += r.Operations
			tot.HotFixes += r.HotFixes
			tot.Repairs += r.Repairs
			tot.Guarded += r.Guarded
			tot.PromptTokens += r.PromptTokens
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "all")
	for _, rn := range rounds {
		t := totals[rn]
		fmt.Fprintf(tw, "\t%d/%d/%d/%d/%d", t.Operations, t.HotFixes, t.Repairs, t.Guarded, t.PromptTokens)
	}
	fmt.Fprintln(tw)
	tw.Flush()
	return b.String()
}
