package mcp

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	jobtools "github.com/labmate/labmate/job/tools"
)

// addJobTools serves the job tools the agent has too (job/tools): submit_job, job_status,
// job_logs, cancel_job and list_jobs, over the server's schedulers (runner.Runner.Jobs), so
// that a job submitted here is logged and watched by perception. The server assigns its
// workspace: a call names at most a directory inside it, relative.
func (l *Lab) addJobTools() {
	readOnly := map[string]bool{jobtools.JobStatus: true, jobtools.JobLogs: true, jobtools.ListJobs: true}
	for _, t := range jobtools.Tools(l.srv.Jobs(), &jobtools.Options{Default: l.opts.JobScheduler, Confine: true}) {
		var ann *sdk.ToolAnnotations
		if readOnly[t.Spec().Name] {
			ann = &sdk.ToolAnnotations{ReadOnlyHint: true}
		}
		l.addTool(t, ann)
	}
}
