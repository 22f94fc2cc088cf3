package benchtasks_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/eval/benchtasks"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
)

const preamble = `import labmate
protocol = labmate.bench()
lw = protocol.loaded_labwares
p = protocol.load_instrument("p300_single_gen2", "left", tip_racks=[lw[3]])
`

const rows = preamble + `plate, res = lw[1], lw[2]
byrow = plate.rows_by_name()
p.transfer(100, res["A1"], [w for r in "%s" for w in byrow[r]])
print("ANSWER: 100 uL of dye in rows %s")
`

const shape = preamble + `plate, res = lw[1], lw[2]
p.transfer(50, res["A1"], plate.wells(*%s))
print("ANSWER: drew the shape")
`

const dyes = preamble + `reader = protocol.load_module("absorbanceReaderV1", 7)
waves = list(range(400, 701, 2))
reader.initialize("multi", waves)
r = reader.read(lw[1])
cands = {"tartrazine": 426, "sunset yellow": 480, "allura red": 504, "erythrosin": 526, "indigo carmine": 610, "brilliant blue": 630}
names = []
for w in ["A1", "A2", "A3"]:
    peak = max(waves, key=lambda nm: r[nm][w])
    names.append(min(cands, key=lambda n: abs(cands[n] - peak)))
names = names if %s else names[1:] + names[:1]
print("ANSWER: " + ", ".join("A%%d: %%s" %% (i + 1, n) for i, n in enumerate(names)))
`

const screen = preamble + `PRODUCT = "C1=C(C2=C(C)C=CC3N(C4OCCCC4)N=CC2=3)C=CC2=NC=CC=C12"
st = lw[2]
hs = protocol.load_module("heaterShakerModuleV1", 4)
plate = hs.load_labware("corning_96_wellplate_360ul_flat")
hs.close_labware_latch()
lig = {"P(tBu)3": "A4", "SPhos": "A5", "dppf": "A6", "P(Ph)3": "A7"}
base = {"NaOH": "A8", "K3PO4": "A9"}
conds = [(l, b) for l in ["P(tBu)3", "SPhos", "dppf", "P(Ph)3"] for b in ["NaOH", "K3PO4"]]
wells = plate.wells()[:8]
for src in ["A1", "A2", "A3"]:
    p.distribute(20, st[src], wells)
for w, (l, b) in zip(wells, conds):
    p.transfer(20, st[lig[l]], w, new_tip="always")
    p.transfer(20, st[base[b]], w, new_tip="always")
hs.set_and_wait_for_temperature(%d)
hs.set_and_wait_for_shake_speed(500)
protocol.delay(minutes=60)
hs.deactivate_shaker()
hs.deactivate_heater()
ys = [protocol.analyze(w).yield_vs_limiting(PRODUCT, "6-Bromoquinoline") for w in wells]
print("yields", [round(y, 1) for y in ys])
print("ANSWER: best condition: %%d" %% (max(range(8), key=lambda i: ys[i]) + 1))
`

var answerLine = regexp.MustCompile(`ANSWER: ([^\n"\\]*)`)

// Each bench task performed by a scripted agent through the protocol API on a real, sandboxed
// Python kernel passes its grader; a wrong protocol or answer fails it. The final answer is the
// one the cell printed, from the twin's readings.
func TestBenchTasks(t *testing.T) {
	dir, err := eval.Find("data/reactions")
	if err != nil {
		t.Fatal(err)
	}
	b, err := benchtasks.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	cross := `["D1","D2","D3","D4","D5","D6","D7","D8","D9","D10","D11","D12","A6","B6","C6","E6","F6","G6","H6"]`
	for _, tc := range []struct {
		name, task, code string
		pass             bool
		score            float64
	}{
		{"colour_rows", "colour_rows", fmt.Sprintf(rows, "ACEG", "ACEG"), true, 100},
		{"colour_rows/wrong", "colour_rows", fmt.Sprintf(rows, "ABCD", "ABCD"), false, 50},
		{"draw_shape", "draw_shape", fmt.Sprintf(shape, cross), true, 100},
		{"draw_shape/wrong", "draw_shape", fmt.Sprintf(shape, `["D1","D2","D3","D4","D5","D6","D7","D8","D9","D10","D11","D12"]`), false, 100 * 89.0 / 96},
		{"identify_dyes", "identify_dyes", fmt.Sprintf(dyes, "True"), true, 100},
		{"identify_dyes/wrong", "identify_dyes", fmt.Sprintf(dyes, "False"), false, 0},
		{"suzuki_screen", "suzuki_screen", fmt.Sprintf(screen, 90), true, 100},
		{"suzuki_screen/too_cool", "suzuki_screen", fmt.Sprintf(screen, 60), false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The scripted model reads the cell's output where the agent shows it (the reviewer's
			// prompt) and answers with what the cell printed.
			var seen strings.Builder
			reading := func(turn llmtest.Turn) llmtest.Turn {
				return llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
					for _, m := range c.Request.Messages {
						seen.WriteString(m.Content)
					}
					return turn
				}}
			}
			final := llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
				m := answerLine.FindAllStringSubmatch(seen.String(), -1)
				if m == nil {
					t.Errorf("the cell printed no answer the model saw: %s", seen.String())
					return agenttest.FinalAnswer("?")
				}
				return agenttest.FinalAnswer(m[len(m)-1][1])
			}}
			srv := llmtest.NewServer(t, agenttest.Plan("protocol", "run the protocol on the bench", "the protocol ran"),
				agenttest.RunCode(tc.code),
				reading(llmtest.JSON(map[string]string{"decision": "accept", "reasons": "the protocol ran", "summary": "done"})),
				final)
			o := &eval.Options{IDs: []string{tc.task}, Out: t.TempDir(), NoMemory: true,
				Model: openai.New("agentic", &openai.Options{Provider: "fake", BaseURL: srv.OpenAIBaseURL()}),
				StartKernel: func(ctx context.Context, _, name string) (kernel.Kernel, error) {
					ko := testutil.KernelOptions(t)
					ko.Workspace = t.TempDir()
					return python.Start(ctx, &ko)
				}}
			start := time.Now()
			if _, err := eval.Run(context.Background(), b, o); err != nil {
				t.Fatal(err)
			}
			trials, _, err := eval.ReadTrials(o.Out)
			if err != nil || len(trials) != 1 {
				t.Fatalf("%d trials, %v", len(trials), err)
			}
			tr := trials[0]
			if tr.Passed != tc.pass || math.Abs(tr.Score-tc.score) > 1e-9 || tr.Error != "" {
				t.Errorf("trial: passed %v, score %g, details %v, error %q, answer %q; want passed %v, score %g",
					tr.Passed, tr.Score, tr.Details, tr.Error, tr.Answer, tc.pass, tc.score)
			}
			if srv.Remaining() != 0 {
				t.Errorf("%d scripted turns left", srv.Remaining())
			}
			t.Logf("%s in %v", tc.name, time.Since(start).Round(time.Millisecond))
		})
	}
}
