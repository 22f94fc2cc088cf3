package agenttest

import (
	"encoding/json"
	"regexp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm"
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

// SubmitJob is a submit_job call (job/tools) of a bash script, in the run's workspace.
func SubmitJob(name, script string) llmtest.Turn {
	return llmtest.CallTool("submit_job", Args(map[string]string{"name": name, "script": script}))
}

// JobCall is a call of a job tool — wait_job, job_status, job_logs, cancel_job — about the
// job the run submitted last: its id is read from the latest submit_job result the model was
// sent.
func JobCall(name string) llmtest.Turn {
	return llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
		id := ""
		for _, m := range c.Request.Messages {
			if s := jobID.FindStringSubmatch(m.Content); m.Role == llm.RoleTool && s != nil {
				id = s[1]
			}
		}
		key := "id"
		if name == agent.ToolWaitJob {
			key = "job_id"
		}
		return llmtest.CallTool(name, Args(map[string]string{key: id}))
	}}
}

// jobID finds a job's id in submit_job's result.
var jobID = regexp.MustCompile(`"id":"((?:local|slurm)-[^"]+)"`)
