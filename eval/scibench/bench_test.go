package scibench_test

import (
	"context"
	"iter"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/eval/scibench"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
	memsqlite "github.com/labmate/labmate/memory/sqlite"
)

// BenchmarkOracle107 is the whole SciBench-107 eval in agent mode (memory, perception and
// reflection on) with an oracle model served over HTTP: each trial plans, computes the
// reference in a real sandboxed Python kernel, is accepted and answers it boxed. It reports
// the eval's wall time, the kernels' share of it (each trial's operations, kernel start
// included) and the time of a trial of the harness in direct mode, where no kernel runs.
func BenchmarkOracle107(b *testing.B) {
	dir, err := eval.Find("benchmarks/scibench")
	if err != nil {
		b.Fatal(err)
	}
	sb, err := scibench.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	items, err := sb.Items("")
	if err != nil {
		b.Fatal(err)
	}
	ref := func(c *llmtest.Call) string {
		for _, m := range c.Request.Messages {
			for _, it := range items {
				if strings.Contains(m.Content, it.Goal[strings.Index(it.Goal, "Q: "):]) {
					v, _ := sb.Reference(it.ID)
					return strconv.FormatFloat(v, 'g', -1, 64)
				}
			}
		}
		b.Errorf("call %d names no problem", c.N)
		return "0"
	}
	kernels := testutil.Kernels(b)
	var inKernels time.Duration
	start := func(ctx context.Context, _, name string) (kernel.Kernel, error) {
		t0 := time.Now()
		k, err := kernels(ctx, name)
		inKernels += time.Since(t0)
		if err != nil {
			return nil, err
		}
		return &timed{k.(snapshotKernel), &inKernels}, nil
	}
	for _, withMemory := range []bool{true, false} {
		b.Run(map[bool]string{true: "memory", false: "no-memory"}[withMemory], func(b *testing.B) {
			oracle107(b, sb, items, ref, start, &inKernels, withMemory)
		})
	}
}

func oracle107(b *testing.B, sb *scibench.Benchmark, items []eval.Item, ref func(*llmtest.Call) string,
	start func(context.Context, string, string) (kernel.Kernel, error), inKernels *time.Duration, withMemory bool) {
	for b.Loop() {
		srv := llmtest.NewServer(b)
		for range items {
			srv.Add(agenttest.Plan("compute", "compute the quantity asked for and print it", "the value is printed"),
				llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn { return agenttest.RunCode("print(" + ref(c) + ")") }},
				llmtest.JSON(map[string]string{"decision": "accept", "reasons": "printed", "summary": "computed"}),
				llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
					return agenttest.FinalAnswer(`The answer is therefore \boxed{` + ref(c) + `}`)
				}})
		}
		store, err := memsqlite.Open(context.Background(), filepath.Join(b.TempDir(), "memory.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		opts := &eval.Options{Model: openai.New("oracle", &openai.Options{Provider: "fake", BaseURL: srv.OpenAIBaseURL()}),
			Out: b.TempDir(), StartKernel: start, Memory: learn.New(store, nil), NoMemory: !withMemory}
		*inKernels = 0
		t0 := time.Now()
		s, err := eval.Run(context.Background(), sb, opts)
		wall := time.Since(t0)
		store.Close()
		if err != nil {
			b.Fatal(err)
		}
		if s.All.Trials != len(items) || s.All.Score != 100 {
			b.Fatalf("%d trials, score %v; want %d at 100", s.All.Trials, s.All.Score, len(items))
		}
		b.ReportMetric(wall.Seconds(), "s/eval")
		b.ReportMetric(float64(wall.Milliseconds())/float64(len(items)), "ms/trial")
		b.ReportMetric(100*(*inKernels).Seconds()/wall.Seconds(), "%kernels")
	}
}

type snapshotKernel interface {
	kernel.Kernel
	kernel.Snapshotter
}

// timed adds the time a kernel spends starting, running cells, saving and closing to *d (the
// trials run one at a time).
type timed struct {
	snapshotKernel
	d *time.Duration
}

func (k *timed) Exec(ctx context.Context, c *kernel.Cell) iter.Seq2[*kernel.Step, error] {
	return func(yield func(*kernel.Step, error) bool) {
		t0 := time.Now()
		defer func() { *k.d += time.Since(t0) }()
		for s, err := range k.snapshotKernel.Exec(ctx, c) {
			if !yield(s, err) {
				return
			}
		}
	}
}

func (k *timed) Save(ctx context.Context, dir string) (*kernel.Snapshot, error) {
	t0 := time.Now()
	defer func() { *k.d += time.Since(t0) }()
	return k.snapshotKernel.Save(ctx, dir)
}

func (k *timed) Close() error {
	t0 := time.Now()
	defer func() { *k.d += time.Since(t0) }()
	return k.snapshotKernel.Close()
}
