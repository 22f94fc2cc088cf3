package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/tool"
)

type addIn struct {
	A    float64 `json:"a" jsonschema:"first addend"`
	B    float64 `json:"b"`
	Note string  `json:"note,omitempty"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

func newSet(t *testing.T) *tool.Set {
	t.Helper()
	add := tool.Must("add", "Add two numbers.", func(_ context.Context, in addIn) (addOut, error) {
		if in.Note == "fail" {
			return addOut{}, errors.New("asked to fail")
		}
		return addOut{in.A + in.B}, nil
	})
	echo := tool.Must("echo", "Echo text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	s, err := tool.NewSet(add, echo)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCall(t *testing.T) {
	s := newSet(t)
	tests := []struct {
		name, tool, args string
		want             string // substring of Content
		isError          bool
	}{
		{"typed result as JSON", "add", `{"a":1,"b":2}`, `{"sum":3}`, false},
		{"string result verbatim", "echo", `{"text":"hi"}`, "hi", false},
		{"invalid JSON", "add", `{"a":1,`, "not valid JSON", true},
		{"missing required field", "add", `{"a":1}`, "b", true},
		{"wrong type", "add", `{"a":"one","b":2}`, "a", true},
		{"unknown field", "add", `{"a":1,"b":2,"c":3}`, "c", true},
		{"function error", "add", `{"a":1,"b":2,"note":"fail"}`, "asked to fail", true},
		{"unknown tool", "mul", `{}`, "add, echo", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := s.Call(context.Background(), llm.ToolCall{ID: "1", Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatal(err)
			}
			if r.IsError != tt.isError || !strings.Contains(r.Content, tt.want) {
				t.Errorf("Call(%s, %s) = %+v; want IsError=%v and content containing %q", tt.tool, tt.args, r, tt.isError, tt.want)
			}
		})
	}
}

func TestContextErrorIsPlumbing(t *testing.T) {
	slow := tool.Must("slow", "Waits.", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := slow.Call(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call with a cancelled context: err = %v; want context.Canceled", err)
	}
}

func TestSpecs(t *testing.T) {
	s := newSet(t)
	specs := s.Specs()
	if len(specs) != 2 || specs[0].Name != "add" {
		t.Fatalf("Specs = %+v", specs)
	}
	var schema struct {
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(specs[0].InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if strings.Join(schema.Required, ",") != "a,b" || schema.Properties["a"]["description"] != "first addend" {
		t.Errorf("add's schema = %s", specs[0].InputSchema)
	}
	dup, _ := newSet(t).Lookup("add")
	if err := s.Add(dup); err == nil {
		t.Error("NewSet accepted two tools with the same name")
	}
}
