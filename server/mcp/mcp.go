// Package mcp exposes the lab to any Model Context Protocol client (IDE agents, desktop
// assistants, other agent frameworks) with the official go-sdk, over stdio (labmate mcp) or
// streamable HTTP (/mcp of labmate serve). Its tools:
//
//   - exec, interrupt, kernels: run code in live, sandboxed kernels; exec streams the
//     observations and perception's verdicts as progress notifications, and cancelling it
//     interrupts the kernel and keeps its workspace;
//   - the files a cell creates or changes (figures, tables) as resources,
//     labmate://artifacts/SESSION/PATH, linked from exec's result;
//   - with a memory store: the memory tools the agent has too (agent/learn): search_memory,
//     search_skills, save_fact, save_skill, update_skill, whose writes go through
//     consolidation and are linked to this connection's last exec operation; skill_get; and
//     resources for each skill (its SKILL.md) and for the memory export;
//   - with a documentation index: docs_search;
//   - when the server runs campaigns: campaign_start, campaign_step, campaign_status;
//   - simulate_protocol and bench_state (lab/benchrun): an Opentrons-style protocol on a fresh
//     twin, and the plate maps of the session's bench, which labmate.bench() in its cells uses;
//   - with job schedulers: submit_job, job_status, job_logs, cancel_job, list_jobs (job/tools),
//     long jobs that outlive the call and the connection.
//
// Every operation runs through the runner (package runner), so the dashboard and WebSocket clients
// see it live in the same log. A tool failure (bad arguments, a cell that raised, an
// interrupted run, a frozen namespace) is a tool result with isError set, which the model
// reads; a protocol error means the plumbing broke.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/knowledge"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

// Options configure New. Nil means defaults.
type Options struct {
	// Version is reported to clients as the server's version (default "dev").
	Version string
	// MaxOutputBytes caps the output an exec result carries (default 64 KiB): its first and
	// last lines, half each, and a line saying how much was cut between them; the whole stream
	// is in the log and went out as progress notifications.
	MaxOutputBytes int
	// Memory, when set, adds the memory tools (search_memory, search_skills, save_fact,
	// save_skill, update_skill, skill_get).
	Memory memory.Store
	// Docs, when set, adds docs_search over the documentation index.
	Docs knowledge.Index
	// FactNamespace and SkillNamespace are where facts and skills are written when a call
	// names no namespace (defaults "user" and "user/skills").
	FactNamespace, SkillNamespace string
	// JobScheduler is the kind submit_job uses when a call names none (default "local"). The
	// job tools (submit_job, job_status, job_logs, cancel_job, list_jobs) are there when the
	// server runs jobs (runner.Config.Jobs), over runner.Runner.Jobs.
	JobScheduler string
}

// Lab is the MCP face of a runner. Create it with New; serve it with Run (stdio or
// any transport) or Handler (streamable HTTP).
type Lab struct {
	srv  *runner.Runner
	opts Options
	mcp  *sdk.Server

	mu    sync.Mutex
	conns map[*sdk.ServerSession]*conn

	skills    skillResources
	artifacts artifactResources
}

// conn is what the lab keeps of one MCP connection.
type conn struct {
	session string // its labmate session
	lastOp  string // its last exec operation: the default provenance of what it writes
}

// New returns the MCP server over the runner srv (labmate serve's, or one of its own for stdio),
// with every tool registered.
func New(srv *runner.Runner, opts *Options) *Lab {
	l := &Lab{srv: srv, conns: map[*sdk.ServerSession]*conn{}}
	if opts != nil {
		l.opts = *opts
	}
	if l.opts.Version == "" {
		l.opts.Version = "dev"
	}
	if l.opts.MaxOutputBytes <= 0 {
		l.opts.MaxOutputBytes = 64 << 10
	}
	if l.opts.FactNamespace == "" {
		l.opts.FactNamespace = "user"
	}
	if l.opts.SkillNamespace == "" {
		l.opts.SkillNamespace = "user/skills"
	}
	l.mcp = sdk.NewServer(&sdk.Implementation{Name: "labmate", Title: "labmate lab partner", Version: l.opts.Version},
		&sdk.ServerOptions{Instructions: instructions})
	l.addKernelTools()
	l.addBenchTools()
	l.addArtifactResources()
	if l.opts.Memory != nil {
		l.addMemoryTools()
		l.addMemoryResources()
	}
	if l.opts.Docs != nil {
		l.addDocsTools()
	}
	if srv.RunsCampaigns() {
		l.addCampaignTools()
	}
	if srv.Jobs() != nil {
		l.addJobTools()
	}
	return l
}

const instructions = `labmate runs code in live, sandboxed interpreter sessions (octave, python with numpy/scipy, shell).
Call kernels to see what is available, then exec to run a cell: its output and perception's verdicts
(Normal/Warning/Error) stream as progress notifications, and the kernel's workspace (variables, files)
persists across exec calls of this connection. Cancel a call, or call interrupt, to stop a run
without losing the workspace.`

// Server is the underlying go-sdk server (to connect it to a transport of one's own).
func (l *Lab) Server() *sdk.Server { return l.mcp }

// Handler serves MCP over streamable HTTP, to be mounted on the protocol server (labmate
// serve mounts it at /mcp with Server.Handle): the server's guard checks its requests like
// every other route's (Host allow-list, Origin, application/json, bearer token), so the
// go-sdk's own localhost-only Host check, which would refuse the names of --allow-host, is
// off.
func (l *Lab) Handler() http.Handler {
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return l.mcp },
		&sdk.StreamableHTTPOptions{
			SessionTimeout:             time.Hour, // a client gone for an hour is gone
			DisableLocalhostProtection: true,
		})
}

// Run serves one client over t (e.g. &sdk.StdioTransport{}) until it disconnects or ctx ends.
// The end of the client's input is not a disconnection: every request read before it is
// answered first (drainTransport).
func (l *Lab) Run(ctx context.Context, t sdk.Transport) error {
	return l.mcp.Run(ctx, drainTransport{t})
}

// session returns the labmate session of an MCP connection: explicit when the caller named
// one, else the connection's own, made on its first use.
func (l *Lab) session(ss *sdk.ServerSession, explicit string) string {
	if explicit != "" {
		return explicit
	}
	return l.conn(ss).session
}

func (l *Lab) conn(ss *sdk.ServerSession) *conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.conns[ss]
	if !ok {
		c = &conn{session: "mcp-" + uuid.NewString()}
		l.conns[ss] = c
		if ss != nil {
			go func() {
				ss.Wait()
				l.mu.Lock()
				delete(l.conns, ss)
				l.mu.Unlock()
			}()
		}
	}
	return c
}

// ran records the connection's last exec operation.
func (l *Lab) ran(ss *sdk.ServerSession, opID string) {
	c := l.conn(ss)
	l.mu.Lock()
	c.lastOp = opID
	l.mu.Unlock()
}

// lastOps is the default provenance of a write: the connection's last exec, if any.
func (l *Lab) lastOps(ss *sdk.ServerSession) []string {
	c := l.conn(ss)
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.lastOp == "" {
		return nil
	}
	return []string{c.lastOp}
}

// errResult is a tool error the model can read.
func errResult(format string, args ...any) *sdk.CallToolResult {
	r := &sdk.CallToolResult{}
	r.SetError(fmt.Errorf(format, args...))
	return r
}

// ExecIn are the arguments of the exec tool: the cell every face of labmate runs
// (operation.Cell, the agent's run_code too) and the session to run it in.
type ExecIn struct {
	operation.Cell
	Session string `json:"session,omitempty" jsonschema:"labmate session to run in (default: this connection's own; its workspace persists across calls)"`
}

// ExecOut is the structured result of exec.
type ExecOut struct {
	SessionID   string             `json:"session_id"`
	OperationID string             `json:"operation_id"`
	Status      string             `json:"status" jsonschema:"completed or failed"`
	Reason      protocol.Reason    `json:"reason,omitempty" jsonschema:"why it failed: error, timeout, interrupted, rejected, crashed, server_restart"`
	Error       string             `json:"error,omitempty"`
	Output      string             `json:"output" jsonschema:"what the cell printed (stdout and stderr, its lines prefixed 'stderr: ', interleaved): its first and last lines, with a line saying how many were cut between them"`
	Truncated   bool               `json:"output_truncated,omitempty"`
	Verdicts    []protocol.Verdict `json:"verdicts,omitempty" jsonschema:"perception's verdicts, each once, in the order first seen"`
	Result      *protocol.Result   `json:"result,omitempty"`
	Artifacts   []ArtifactOut      `json:"artifacts,omitempty" jsonschema:"the files the cell created or changed in its workspace, each readable as a resource"`
}

// ArtifactOut is one artifact of an exec: the file and its resource URI.
type ArtifactOut struct {
	URI      string `json:"uri" jsonschema:"the resource to read it from"`
	Path     string `json:"path" jsonschema:"relative to the workspace"`
	MIMEType string `json:"mime_type"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256,omitempty"`
}

// KernelsIn are the arguments of the kernels tool (none).
type KernelsIn struct{}

// KernelsOut lists the kernels.
type KernelsOut struct {
	Kernels []runner.KernelInfo `json:"kernels"`
	Session string              `json:"session" jsonschema:"this connection's labmate session"`
}

// InterruptIn are the arguments of the interrupt tool.
type InterruptIn struct {
	OperationID string `json:"operation_id" jsonschema:"the operation to stop (exec's operation_id)"`
	Session     string `json:"session,omitempty" jsonschema:"its labmate session (default: this connection's)"`
	Why         string `json:"why,omitempty" jsonschema:"a reason, logged with the interrupt"`
}

// InterruptOut confirms an interrupt.
type InterruptOut struct {
	OperationID string `json:"operation_id"`
	Interrupted bool   `json:"interrupted"`
}

func (l *Lab) addKernelTools() {
	sdk.AddTool(l.mcp, &sdk.Tool{Name: "kernels", Title: "List kernels",
		Description: "List the kernels labmate can run code in (octave, python, shell) with their interpreter versions.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest, _ KernelsIn) (*sdk.CallToolResult, KernelsOut, error) {
			return nil, KernelsOut{Kernels: l.srv.Kernels(ctx), Session: l.session(req.Session, "")}, nil
		})
	sdk.AddTool(l.mcp, &sdk.Tool{Name: "exec", Title: "Run a cell",
		Description: "Run code as one cell in a live, sandboxed kernel whose workspace persists across calls. " +
			"Output lines and perception's verdicts (Normal/Warning/Error) stream as progress notifications; " +
			"with hotfix on_error perception stops a run that errors, diverges, turns NaN or breaks a watch constraint. " +
			"Cancelling the call interrupts the kernel and keeps its workspace."},
		l.exec)
	sdk.AddTool(l.mcp, &sdk.Tool{Name: "interrupt", Title: "Interrupt an operation",
		Description: "Stop a queued or running operation (e.g. an exec started by another client); the kernel's workspace is kept."},
		func(ctx context.Context, req *sdk.CallToolRequest, in InterruptIn) (*sdk.CallToolResult, InterruptOut, error) {
			why := in.Why
			if why == "" {
				why = "interrupted by an MCP client"
			}
			if err := l.srv.Interrupt(ctx, l.session(req.Session, in.Session), in.OperationID, why); err != nil {
				return errResult("interrupt: %v", err), InterruptOut{OperationID: in.OperationID}, nil
			}
			return nil, InterruptOut{OperationID: in.OperationID, Interrupted: true}, nil
		})
}

func (l *Lab) exec(ctx context.Context, req *sdk.CallToolRequest, in ExecIn) (*sdk.CallToolResult, ExecOut, error) {
	session := l.session(req.Session, in.Session)
	prog := newProgress(ctx, req)
	defer prog.close()
	notify := prog.add
	var out *operation.Collector
	for m, err := range l.srv.Run(ctx, session, in.Request()) {
		if err != nil {
			return nil, ExecOut{SessionID: session}, fmt.Errorf("exec: %w", err) // the plumbing broke
		}
		if out == nil {
			out = operation.Collect(m.OperationID, in.Kernel, in.Code, &operation.OutputLimits{Bytes: l.opts.MaxOutputBytes})
		}
		p, err := protocol.DecodePayload(m)
		if err != nil {
			return nil, ExecOut{SessionID: session, OperationID: m.OperationID}, fmt.Errorf("exec: %w", err)
		}
		out.Add(&operation.Message{Type: m.Type, Payload: p})
		switch p := p.(type) {
		case *protocol.StatePayload:
			if m.Type == protocol.TypeAck { // names the operation, for interrupt from elsewhere
				notify(fmt.Sprintf("operation %s of session %s acknowledged", m.OperationID, session))
			}
		case *protocol.Progress:
			if o := p.Observation; o != nil {
				if line, ok := describe(o); ok {
					notify(line)
				}
			}
			if v := p.Verdict; v != nil {
				notify(fmt.Sprintf("verdict %s (%s): %s", v.State, v.Detector, v.Message))
			}
		}
	}
	prog.close() // the last lines go out before the result
	if out == nil {
		return nil, ExecOut{SessionID: session}, errors.New("exec: the operation's stream was empty")
	}
	l.ran(req.Session, out.OperationID)
	eo := l.execOut(session, &out.Outcome)
	if eo.Status == "" {
		return nil, eo, errors.New("exec: the operation's stream ended without its terminal message")
	}
	uri := map[string]string{}
	for _, a := range eo.Artifacts {
		uri[a.Path] = a.URI
	}
	text := out.TextWhere(func(path string) string { return uri[path] })
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: !out.OK}
	for _, a := range eo.Artifacts {
		res.Content = append(res.Content, &sdk.ResourceLink{URI: a.URI, Name: a.Path, MIMEType: a.MIMEType, Size: &a.Size})
	}
	return res, eo, nil
}

// execOut is exec's structured result, from the operation's outcome.
func (l *Lab) execOut(session string, o *operation.Outcome) ExecOut {
	eo := ExecOut{SessionID: session, OperationID: o.OperationID, Status: o.Status(), Reason: o.Reason, Error: o.Error,
		Output: o.Output, Truncated: o.OutputCut > 0 || o.Result != nil && o.Result.Truncated, Verdicts: o.Verdicts, Result: o.Result}
	for i := range o.Artifacts {
		a := &o.Artifacts[i]
		eo.Artifacts = append(eo.Artifacts, ArtifactOut{URI: l.listArtifact(session, o.OperationID, a),
			Path: a.Path, MIMEType: a.MIMEType, Size: a.Size, SHA256: a.SHA256})
	}
	return eo
}

// describe renders an observation as one progress message; false for those not worth one
// (resource samples).
func describe(o *protocol.Observation) (string, bool) {
	switch o.Kind {
	case protocol.ObsStdout:
		return o.Line, true
	case protocol.ObsStderr:
		return "stderr: " + o.Line, true
	case protocol.ObsTelemetry:
		if o.Sample != nil {
			return fmt.Sprintf("telemetry %s = %g", o.Sample.Name, o.Sample.Value), true
		}
	case protocol.ObsEvent:
		if o.Event != nil {
			return strings.TrimSpace("event " + string(o.Event.Name) + " " + o.Event.Detail), true
		}
	case protocol.ObsArtifact:
		return fmt.Sprintf("artifact %s (%s, %d bytes)", o.Artifact.Path, o.Artifact.MIMEType, o.Artifact.Size), true
	}
	return "", false
}
