package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/labmate/labmate/llm"
)

// TrialsFile is the name of a result folder's journal of trials.
const TrialsFile = "trials.jsonl"

// ErrForeign is wrapped by Run for a result folder whose trials are another benchmark's or
// another set's.
var ErrForeign = errors.New("eval: the result folder holds another benchmark's trials")

// Trial is one finished trial — a fresh agent run on one item, its answer graded — as one line
// of a result folder's trials.jsonl. A trial is identified by its task, mode, model and index.
type Trial struct {
	Benchmark string `json:"benchmark"`
	Set       string `json:"set"`
	Task      string `json:"task"`
	Group     string `json:"group,omitempty"`
	// Mode is how the trial ran: agent, codeact or direct, with the ablations after a "+"
	// each (agent+no-perception+no-reflect).
	Mode  string `json:"mode"`
	Model string `json:"model"`
	Trial int    `json:"trial"` // 0, 1, … K-1

	Score  float64 `json:"score"` // 0–100
	Passed bool    `json:"passed"`
	// Modules are the tokens and calls of each module of the run (plan, code, perceive,
	// reflect; direct; codeact); Tokens is their total.
	Modules    []llm.ModuleUsage `json:"modules,omitempty"`
	Tokens     int64             `json:"tokens"`
	WallS      float64           `json:"wall_s"`
	Operations int               `json:"operations"`
	HotFixes   int               `json:"hot_fixes"`
	Repairs    int               `json:"repairs"`
	Replans    int               `json:"replans"`
	Turns      int               `json:"turns"`
	RunID      string            `json:"run_id"`
	// Stop is why the run ended (agent.StopReason); only an answered run is graded.
	Stop    string         `json:"stop"`
	Answer  string         `json:"answer,omitempty"`
	Details map[string]any `json:"details,omitempty"`
	// Error is what failed: the run (the plumbing, or the model's answers) or the grader.
	Error string `json:"error,omitempty"`
}

// key identifies a trial in its folder.
type key struct {
	task, mode, model string
	trial             int
}

func (t *Trial) key() key { return key{t.Task, t.Mode, t.Model, t.Trial} }

// ReadTrials reads the trials of a result folder. A torn last line (the eval was killed while
// writing it) is left out, and torn says how long it was; any other line that cannot be read
// is an error naming it.
func ReadTrials(dir string) (trials []*Trial, torn int, err error) {
	trials, _, torn, err = readTrials(filepath.Join(dir, TrialsFile))
	return trials, torn, err
}

// readTrials reads the journal at path (none is no trials) and returns its trials and the
// length of its complete lines.
func readTrials(path string) (trials []*Trial, valid int64, torn int, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, 0, nil
	}
	if err != nil {
		return nil, 0, 0, fmt.Errorf("eval: %w", err)
	}
	// A trial is written as one line in one write: a last line without its newline was cut.
	if i := bytes.LastIndexByte(b, '\n'); i < len(b)-1 {
		torn = len(b) - i - 1
		b = b[:i+1]
	}
	for n, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		t := new(Trial)
		if err := json.Unmarshal(line, t); err != nil {
			return nil, 0, 0, fmt.Errorf("eval: %s:%d: %w (the journal is damaged: mend or remove the line)", path, n+1, err)
		}
		if t.Task == "" || t.Mode == "" || t.Model == "" || t.Trial < 0 {
			return nil, 0, 0, fmt.Errorf("eval: %s:%d: a trial needs task, mode, model and a trial index ≥ 0", path, n+1)
		}
		trials = append(trials, t)
	}
	return trials, int64(len(b)), torn, nil
}

// journal is a result folder's trials.jsonl, open for appending by one eval at a time.
type journal struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// openJournal opens dir/trials.jsonl for appending, locked against a second eval, and returns
// its trials; a torn last line is cut off (torn says how long it was), so that the next trial
// starts a line of its own.
func openJournal(dir string) (j *journal, trials []*Trial, torn int, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, 0, fmt.Errorf("eval: the result folder: %w", err)
	}
	path := filepath.Join(dir, TrialsFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("eval: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, nil, 0, fmt.Errorf("eval: %s is locked by another eval writing the same folder: %w", path, err)
	}
	trials, valid, torn, err := readTrials(path)
	if err == nil && torn > 0 {
		err = f.Truncate(valid)
	}
	if err != nil {
		f.Close()
		return nil, nil, 0, err
	}
	return &journal{f: f, path: path}, trials, torn, nil
}

// append writes t as one line, in one write, and syncs it to disk: a trial is in the journal
// whole or not at all.
func (j *journal) append(t *Trial) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("eval: encoding trial %d of %s: %w", t.Trial, t.Task, err)
	}
	b = append(b, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(b); err != nil {
		return fmt.Errorf("eval: writing %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("eval: syncing %s: %w", j.path, err)
	}
	return nil
}

func (j *journal) close() error { return j.f.Close() }
