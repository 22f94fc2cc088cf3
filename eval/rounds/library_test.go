package rounds_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/eval/rounds"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/shell"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/builtin"
	"github.com/labmate/labmate/memory/sqlite"
)

func shellKernels(t testing.TB) func(ctx context.Context, name string) (kernel.Kernel, error) {
	ws := t.TempDir()
	return func(ctx context.Context, name string) (kernel.Kernel, error) {
		if name != "shell" {
			return nil, fmt.Errorf("no kernel %q in this test", name)
		}
		o := testutil.KernelOptions(t)
		o.Workspace = ws
		return shell.Start(ctx, &o)
	}
}

// libraryR1 runs round 1 of the library tasks with a fresh store, with labmate's built-in
// skill library imported or not, and returns the results and the store.
func libraryR1(t testing.TB, withLibrary bool) ([]rounds.Result, memory.Store, []*llmtest.Call) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	name := "R1 without the library"
	if withLibrary {
		name = "R1 with the library"
		if _, err := builtin.Import(ctx, s, "test"); err != nil {
			t.Fatal(err)
		}
	}
	lts := rounds.LibraryTasks()
	turns := make([]llmtest.Turn, 60)
	for i := range turns {
		turns[i] = rounds.LibraryPolicy(lts)
	}
	srv := llmtest.NewServer(t, turns...)
	model := openai.New("model-a", &openai.Options{Provider: "fake", BaseURL: srv.OpenAIBaseURL()})
	res, err := rounds.Round(ctx, name, &rounds.Config{Model: model, Store: s, StartKernel: shellKernels(t),
		Memory: &learn.Options{Namespace: "user", Model: model.Name()}}, rounds.AsTasks(lts))
	if err != nil {
		t.Fatal(err)
	}
	return res, s, srv.Calls()
}

// TestLibraryR1: with the built-in skill library, round 1 of a materials task (Cu's vacancy
// formation energy, Cu's C44) recalls the skill, runs its procedure once and needs fewer
// operations and fewer prompt tokens than without it; the library is not written to, and the
// accepted step becomes the user's own skill.
func TestLibraryR1(t *testing.T) {
	without, _, _ := libraryR1(t, false)
	with, s, calls := libraryR1(t, true)
	// The planner saw the skills before it planned.
	for _, lt := range rounds.LibraryTasks() {
		seen := false
		for _, c := range calls {
			if strings.HasPrefix(c.Request.System, "You are the planning module") && strings.Contains(c.Request.Messages[0].Content, lt.Goal) {
				seen = seen || strings.Contains(c.Request.Messages[0].Content, "skill "+lt.Skill+" ")
			}
		}
		if !seen {
			t.Errorf("%s: the planner's prompt did not show the skill %s", lt.ID, lt.Skill)
		}
	}
	t.Logf("operations/Hot-Fixes/repairs/guarded/prompt tokens:\n%s", rounds.Table(append(append([]rounds.Result(nil), without...), with...)))
	var opsWithout, opsWith int
	var tokWithout, tokWith int64
	for i := range with {
		a, b := without[i], with[i]
		if !a.Answered || !b.Answered {
			t.Errorf("%s: answered without %v, with %v", a.Task, a.Answered, b.Answered)
		}
		if b.Operations != 1 || a.Operations < 2 {
			t.Errorf("%s: %d operations with the library (want 1), %d without (want ≥ 2)", a.Task, b.Operations, a.Operations)
		}
		if b.PromptTokens >= a.PromptTokens {
			t.Errorf("%s: %d prompt tokens with the library, %d without", a.Task, b.PromptTokens, a.PromptTokens)
		}
		opsWithout, opsWith = opsWithout+a.Operations, opsWith+b.Operations
		tokWithout, tokWith = tokWithout+a.PromptTokens, tokWith+b.PromptTokens
	}
	t.Logf("R1 without the library: %d operations, %d prompt tokens; with: %d operations, %d prompt tokens", opsWithout, tokWithout, opsWith, tokWith)
	ctx := context.Background()
	for r, err := range s.Search(ctx, &memory.Query{Namespaces: []string{builtin.Namespace}, Kinds: []memory.Kind{memory.KindSkill}}) {
		if err != nil {
			t.Fatal(err)
		}
		if sk := r.Skill; sk.Version != 1 || sk.Uses != 0 {
			t.Errorf("the shipped skill %s was revised: version %d, %d uses", sk.Name, sk.Version, sk.Uses)
		}
	}
	own := 0
	for r, err := range s.Search(ctx, &memory.Query{Namespaces: []string{"user"}, Kinds: []memory.Kind{memory.KindSkill}}) {
		if err != nil {
			t.Fatal(err)
		}
		own++
		_ = r
	}
	if own == 0 {
		t.Error("the user's run left no skill of its own in the user's namespace")
	}
}
