// Package tool gives the agent typed tools: a Go function whose input struct becomes the JSON
// Schema the model sees, whose arguments are validated against that schema before the function
// runs, and whose failures come back as results the model can read and react to.
//
// A tool failure (bad arguments, an unknown tool, the function's own error) is a Result with
// IsError set: the model sees it and the run goes on. A Go error from Call means the plumbing broke
// (the context ended), and the caller stops.
package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/labmate/labmate/llm"
)

// Tool is one action a model can take.
type Tool interface {
	Spec() llm.ToolSpec
	Call(ctx context.Context, args json.RawMessage) (*Result, error)
}

// Result is what a tool call returns to the model.
type Result struct {
	// Content is what the model reads.
	Content string `json:"content"`
	// IsError marks a failed call; Content says what went wrong and how to do better.
	IsError bool `json:"is_error,omitempty"`
	// Untrusted marks content that came from outside (a web page, a paper, a file): the agent
	// quotes it to the model as material to read, never as instructions to follow.
	Untrusted bool `json:"untrusted,omitempty"`
	// Sources are what Content can be cited as (URLs, file:line ranges).
	Sources []string `json:"sources,omitempty"`
	// Data is the structured output, for events and callers that are not models.
	Data any `json:"data,omitempty"`
}

// Errorf is a failed call's Result.
func Errorf(format string, args ...any) *Result {
	return &Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Func is the function behind a typed tool. Its error becomes an IsError result, except a
// context error, which is returned to the caller.
type Func[In, Out any] func(ctx context.Context, in In) (Out, error)

type typed[In, Out any] struct {
	spec     llm.ToolSpec
	resolved *jsonschema.Resolved
	fn       Func[In, Out]
}

// New makes a tool from fn. Its input schema is derived from In (a struct: field json names,
// omitempty for optional fields, `jsonschema:"…"` tags for descriptions). Out is given to the model
// as JSON, or verbatim when it is a string or a *Result.
func New[In, Out any](name, description string, fn Func[In, Out]) (Tool, error) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", name, err)
	}
	return &typed[In, Out]{
		spec:     llm.ToolSpec{Name: name, Description: description, InputSchema: raw},
		resolved: resolved,
		fn:       fn,
	}, nil
}

// Must is New for tools defined at init time, where a schema error is a programming error.
func Must[In, Out any](name, description string, fn Func[In, Out]) Tool {
	t, err := New(name, description, fn)
	if err != nil {
		panic(err)
	}
	return t
}

func (t *typed[In, Out]) Spec() llm.ToolSpec { return t.spec }

func (t *typed[In, Out]) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var instance any
	if err := json.Unmarshal(args, &instance); err != nil {
		return Errorf("%s: the arguments are not valid JSON (%v): send one JSON object matching the tool's schema", t.spec.Name, err), nil
	}
	if err := t.resolved.Validate(instance); err != nil {
		return Errorf("%s: the arguments do not match the schema: %v", t.spec.Name, err), nil
	}
	var in In
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return Errorf("%s: bad arguments: %v", t.spec.Name, err), nil
	}
	out, err := t.fn(ctx, in)
	if err != nil {
		if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return nil, err
		}
		return Errorf("%s failed: %v", t.spec.Name, err), nil
	}
	switch o := any(out).(type) {
	case *Result:
		if o == nil {
			return &Result{}, nil
		}
		return o, nil
	case string:
		return &Result{Content: o, Data: o}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("tool %s: encoding its result: %w", t.spec.Name, err)
	}
	return &Result{Content: string(b), Data: out}, nil
}

// Set is an ordered set of tools with unique names. A nil *Set has no tools.
type Set struct {
	tools []Tool
}

// NewSet returns a set of tools, refusing duplicate or empty names.
func NewSet(tools ...Tool) (*Set, error) {
	s := &Set{}
	return s, s.Add(tools...)
}

// Add appends tools to the set.
func (s *Set) Add(tools ...Tool) error {
	for _, t := range tools {
		name := t.Spec().Name
		if name == "" {
			return errors.New("tool: a tool has no name")
		}
		if _, ok := s.Lookup(name); ok {
			return fmt.Errorf("tool: two tools are named %q", name)
		}
		s.tools = append(s.tools, t)
	}
	return nil
}

// Lookup finds a tool by name.
func (s *Set) Lookup(name string) (Tool, bool) {
	if s == nil {
		return nil, false
	}
	i := slices.IndexFunc(s.tools, func(t Tool) bool { return t.Spec().Name == name })
	if i < 0 {
		return nil, false
	}
	return s.tools[i], true
}

// Names lists the tools' names in order.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Spec().Name
	}
	return names
}

// Specs declares every tool to a model.
func (s *Set) Specs() []llm.ToolSpec {
	if s == nil {
		return nil
	}
	specs := make([]llm.ToolSpec, len(s.tools))
	for i, t := range s.tools {
		specs[i] = t.Spec()
	}
	return specs
}

// Call runs the tool a model asked for. An unknown tool is an IsError result that lists the
// tools that exist.
func (s *Set) Call(ctx context.Context, call llm.ToolCall) (*Result, error) {
	t, ok := s.Lookup(call.Name)
	if !ok {
		return Errorf("there is no tool named %q; the tools are: %s", call.Name, strings.Join(s.Names(), ", ")), nil
	}
	return t.Call(ctx, call.Arguments)
}

// Origin is on whose behalf a tool is called: the agent run or MCP connection (Session), the
// operations the call follows (the current step's), the model and the actor. The agent and the
// MCP server set it on the context of every call; tools that write, such as memory's, link what
// they write to it.
type Origin struct {
	Session    string
	Operations []string
	Model      string
	Actor      string
}

type originKey struct{}

// WithOrigin returns ctx carrying o.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginOf is the Origin ctx carries (zero when none).
func OriginOf(ctx context.Context) Origin {
	o, _ := ctx.Value(originKey{}).(Origin)
	return o
}
