package agenttest

import (
	"encoding/json"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm/llmtest"
)

// The scripted model's turns that drive an agent: a one-step plan, a cell to run, the
// reviewer's acceptance and the final answer.

// RunCode is a run_code call with the cell and its --watch constraints.
func RunCode(code string, watch ...string) llmtest.Turn {
	return llmtest.CallTool(agent.ToolRunCode, Args(agent.RunCode{Code: code, Watch: watch}))
}

// FinalAnswer is a final_answer call.
func FinalAnswer(answer string) llmtest.Turn {
	return llmtest.CallTool(agent.ToolFinalAnswer, Args(agent.FinalAnswer{Answer: answer}))
}

// Plan is a plan of one run_code step.
func Plan(title, action, checkpoint string) llmtest.Turn {
	return llmtest.JSON(agent.Plan{Goal: title, Steps: []agent.Step{{Title: title, Action: action, Tool: agent.ToolRunCode, Checkpoint: checkpoint}}})
}

// Args is v as a tool call's JSON arguments.
func Args(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
