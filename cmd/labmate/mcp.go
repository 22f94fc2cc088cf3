package main

import (
	"fmt"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server/mcp"
)

func newMCPCmd() *cobra.Command {
	var (
		logPath, workspaces, data string
		prewarm                   []string
		sf                        sandboxFlags
		cf                        campaignFlags
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the lab to an MCP client (IDE agent, desktop assistant) over stdio",
		Long: `Serve labmate as a Model Context Protocol server on stdin/stdout, for clients that
start it as a subprocess. The same tools are served over streamable HTTP at /mcp by
labmate serve. Each client connection gets its own session, whose kernel workspaces
persist across exec calls.

Tools:
  exec             run a cell (kernel, code, watch, hotfix, timeout_s): output lines and
                   perception's verdicts stream as progress notifications; cancelling the
                   call interrupts the kernel and keeps its workspace
  interrupt        stop an operation by id
  kernels          the interpreters and their versions
  search_memory, search_skills, save_fact, save_skill, update_skill, skill_get
                   the memory the agent uses too ($LABMATE_MEMORY, a SQLite file or a
                   postgres:// URL, else DATA/memory.db: the one labmate memory and labmate
                   serve use); writes go through consolidation and are linked to the
                   operations they came from
  docs_search      the documentation index of labmate docs ($LABMATE_DOCS_DB or DATA/docs.db)
  campaign_start, campaign_step, campaign_status
                   the optimization game on a CSV dataset (random or Bayesian planner;
                   each campaign a stream of the log (--log); the CSV is sent inline, or named
                   by a path under a --data-root directory)
  submit_job, job_status, job_logs, cancel_job, list_jobs
                   long jobs that outlive the call (labmate job): local ones in DATA/jobs,
                   Slurm ones in DATA/slurm when sbatch is on PATH; queued local jobs start
                   while this server runs
Resources: each skill's SKILL.md (labmate://skills/NAMESPACE/NAME) and the memory export
(labmate://memory/export).

The operations log is kept in memory unless --log names a SQLite file. Workspaces are made
under --workspaces (default: a temporary directory removed on exit). Kernels run sandboxed
unless --no-sandbox. stdout carries only the protocol; information goes to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPrewarm(prewarm); err != nil {
				return err
			}
			sb, err := sf.open()
			if err != nil {
				return err
			}
			var store protocol.Store = protocol.NewMemStore()
			if logPath != "" {
				if store, err = sqlite.OpenAs(logPath, "mcp"); err != nil { // its runner follows the interrupts others append
					return err
				}
			}
			defer store.Close()
			if workspaces == "" {
				if workspaces, err = os.MkdirTemp("", "labmate-mcp-"); err != nil {
					return err
				}
				defer os.RemoveAll(workspaces)
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			if data, err = dataDir(data); err != nil {
				return err
			}
			cfg := serverConfig(store, sb, workspaces, prewarm)
			if cfg.Campaigns, err = cf.setup(); err != nil {
				return err
			}
			mem, docs, closeStores, err := openStores(ctx, data)
			if err != nil {
				return err
			}
			defer closeStores()
			jobs, closeJobs := (&jobDirs{data: data}).serving(cmd, "mcp") // queued local jobs start while it runs
			defer closeJobs()
			cfg.Jobs = jobs
			rn, err := runner.New(ctx, cfg.Config) // no HTTP server: MCP over stdio is the only face
			if err != nil {
				return err
			}
			defer rn.Close()
			fmt.Fprintf(cmd.ErrOrStderr(), "labmate mcp: serving on stdio (memory %s; sandbox: %s)\n", redact(memoryPath(data)), sb.Describe())
			err = mcp.New(rn, &mcp.Options{Version: version, Memory: mem, Docs: docs}).Run(ctx, &sdk.StdioTransport{})
			if ctx.Err() != nil {
				return nil
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "data directory DATA (default $XDG_DATA_HOME/labmate or ~/.local/share/labmate)")
	f.StringVar(&logPath, "log", "", "keep the operations log in this SQLite file (default: in memory)")
	f.StringVar(&workspaces, "workspaces", "", "directory for session workspaces (default: a temporary one)")
	f.StringSliceVar(&prewarm, "prewarm", []string{"python"}, "kernels kept started ahead of use")
	sf.add(cmd)
	cf.add(cmd)
	return cmd
}
