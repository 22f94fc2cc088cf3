package agent_test

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/anthropic"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
	"github.com/labmate/labmate/protocol"
	psqlite "github.com/labmate/labmate/protocol/sqlite"
)

// checkpoints is the agent's Store in a protocol log of its own, a SQLite file as labmate's.
func checkpoints(tb testing.TB) *agent.Checkpoints {
	log, err := psqlite.Open(filepath.Join(tb.TempDir(), "labmate.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { log.Close() })
	return agent.NewCheckpoints(log)
}

// openAIModel is the real OpenAI-compatible adapter talking to the fake server over HTTP.
func openAIModel(srv *llmtest.Server) llm.Model {
	return openai.New("fake-model", &openai.Options{Provider: "fake", BaseURL: srv.OpenAIBaseURL()})
}

// anthropicModel is the real Anthropic adapter talking to the fake server over HTTP.
func anthropicModel(srv *llmtest.Server) llm.Model {
	return anthropic.New("fake-claude", &anthropic.Options{BaseURL: srv.URL(), APIKey: "test-key"})
}

// run runs task to the end and returns its events and the error it ended with. The
// operations of a run that ended must obey the protocol's state machine.
func run(t testing.TB, a *agent.Agent, task *agent.Task) ([]*agent.Event, error) {
	t.Helper()
	var evs []*agent.Event
	for ev, err := range a.Run(context.Background(), task) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	testutil.Replay(t, messages(evs))
	return evs, nil
}

// messages are the protocol messages of the run_code operations among evs.
func messages(evs []*agent.Event) iter.Seq[*protocol.EnhancedMessage] {
	return func(yield func(*protocol.EnhancedMessage) bool) {
		for _, e := range evs {
			if e.Type == agent.EventOperation && !yield(e.Message) {
				return
			}
		}
	}
}

func of(evs []*agent.Event, typ agent.EventType) []*agent.Event {
	var out []*agent.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func stopOf(t testing.TB, evs []*agent.Event) *agent.Stop {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Type != agent.EventStop {
		t.Fatalf("the run did not end with a stop event; events: %s", types(evs))
	}
	return evs[len(evs)-1].Stop
}

func types(evs []*agent.Event) string {
	var b []string
	for _, e := range evs {
		if e.Type != agent.EventOperation {
			b = append(b, string(e.Type))
		}
	}
	return strings.Join(b, " ")
}

// outcomes are the run_code outcomes, in order.
func outcomes(evs []*agent.Event) []*agent.Outcome {
	var out []*agent.Outcome
	for _, e := range of(evs, agent.EventToolResult) {
		if e.Tool.Operation != nil {
			out = append(out, e.Tool.Operation)
		}
	}
	return out
}

func accept(summary string) llmtest.Turn {
	return llmtest.JSON(map[string]string{"decision": "accept", "reasons": "the checkpoint is met", "summary": summary})
}

// lastMessage is the content of the last message the model was sent.
func lastMessage(c *llmtest.Call) llm.Message {
	m := c.Request.Messages
	return m[len(m)-1]
}

// expect wraps turn so that the call it answers must come from module and its last message must
// contain every one of want.
func expect(t testing.TB, module string, turn llmtest.Turn, want ...string) llmtest.Turn {
	return llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
		m := lastMessage(c)
		for _, w := range want {
			if !strings.Contains(m.Content, w) {
				t.Errorf("call %d (%s): the last message lacks %q:\n%s", c.N, module, w, m.Content)
			}
		}
		return turn
	}}
}

// promptSizes gathers the tokens each module's calls sent, across the scenarios, for the report.
var promptSizes = struct {
	sync.Mutex
	rows map[string][]int64 // "scenario/module" → input tokens per call
}{rows: map[string][]int64{}}

func recordPrompts(t testing.TB, scenario string, evs []*agent.Event) {
	promptSizes.Lock()
	defer promptSizes.Unlock()
	for _, e := range of(evs, agent.EventModelCall) {
		k := scenario + "/" + e.Call.Module
		promptSizes.rows[k] = append(promptSizes.rows[k], e.Call.Usage.InputTokens)
	}
}

// promptReport is a table of input tokens per module call, per scenario.
func promptReport() string {
	promptSizes.Lock()
	defer promptSizes.Unlock()
	keys := make([]string, 0, len(promptSizes.rows))
	for k := range promptSizes.rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%-40s %5s %8s %8s %8s\n", "scenario/module", "calls", "mean in", "max in", "tokens/turn")
	for _, k := range keys {
		v := promptSizes.rows[k]
		var sum, mx int64
		for _, x := range v {
			sum += x
			mx = max(mx, x)
		}
		fmt.Fprintf(&b, "%-40s %5d %8d %8d %8v\n", k, len(v), sum/int64(len(v)), mx, v)
	}
	return b.String()
}
