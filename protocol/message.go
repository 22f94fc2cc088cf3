// Package protocol is labmate's Asynchronous State Sync Protocol: the EnhancedMessage every
// client sees, the payloads of each message type, the observations kernels stream, the state
// machines of operations and agent runs, and the append-only per-session log that makes every
// stream resumable.
//
// It is pure: no I/O, no goroutines, imported by every other package.
package protocol

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Type is the kind of an EnhancedMessage.
type Type string

// The message types of PROTOCOL.md.
const (
	TypeRequest   Type = "operation_request"   // client → server
	TypeAck       Type = "operation_ack"       // server → client
	TypeStart     Type = "operation_start"     // server → client
	TypeProgress  Type = "operation_progress"  // server → client
	TypeComplete  Type = "operation_complete"  // server → client
	TypeFailed    Type = "operation_failed"    // server → client
	TypeInterrupt Type = "operation_interrupt" // client → server (extension: the stop action)
)

// The message types of a run's stream (extension): one run_event per event of an agent run or a
// campaign, its payload the event (a JSON object: package agent's Event, or a campaign's turn),
// then one run_end. A run_end that says the run is resumable may be followed by a run_resume, and
// the stream goes on with the resumed run's events. The run's id is the message's operation_id.
// A run_checkpoint carries what the run needs to go on (package agent's State, a JSON object):
// a resume continues from the stream's last one. It may come before the first run_event and
// after a run_end (a checkpoint imported into an ended run's stream); clients may ignore it.
const (
	TypeRunEvent      Type = "run_event"      // server → client
	TypeRunEnd        Type = "run_end"        // server → client
	TypeRunResume     Type = "run_resume"     // server → client
	TypeRunCheckpoint Type = "run_checkpoint" // server → client
)

// TypeSessionUpdate names or closes a session (extension): the stream of operation id
// SessionStream in each session, kind KindSession, payload SessionUpdate. It never ends: the
// latest update says what the session is called and whether it is closed.
const TypeSessionUpdate Type = "session_update"

// Stream kinds (OperationInfo.Kind) beside an operation_request's kind. A run's kind is its first
// run_event's "kind" field, KindAgentRun when absent.
const (
	KindAgentRun = "agent_run"
	KindCampaign = "campaign"
	KindSession  = "session"
	// KindJob is an operation that follows a background job (package job): the job outlives
	// the server, so Store.Recover leaves its operation open for the next server to follow on.
	KindJob = "job"
)

// SessionStream is the operation id of a session's own stream of session_update messages.
const SessionStream = "session"

// Valid reports whether t is one of the protocol's message types.
func (t Type) Valid() bool {
	switch t {
	case TypeRequest, TypeAck, TypeStart, TypeProgress, TypeComplete, TypeFailed, TypeInterrupt,
		TypeRunEvent, TypeRunEnd, TypeRunResume, TypeRunCheckpoint, TypeSessionUpdate:
		return true
	}
	return false
}

// Terminal reports whether a message of type t ends its operation or run.
func (t Type) Terminal() bool { return t == TypeComplete || t == TypeFailed || t == TypeRunEnd }

// EnhancedMessage is one protocol message: a WebSocket text frame, or one NDJSON line on the CLI.
type EnhancedMessage struct {
	ID          string          `json:"id"`
	Type        Type            `json:"type"`
	Payload     json.RawMessage `json:"payload"`
	Timestamp   float64         `json:"timestamp"` // Unix seconds, sub-millisecond
	SessionID   string          `json:"session_id"`
	OperationID string          `json:"operation_id"`
	Seq         int64           `json:"seq"` // position in the session's log; 0 until appended
}

// NewMessage builds a message with a fresh id and the current time, marshalling payload.
func NewMessage(t Type, sessionID, operationID string, payload any) (*EnhancedMessage, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("protocol: encoding %s payload: %w", t, err)
	}
	return &EnhancedMessage{
		ID:          uuid.NewString(),
		Type:        t,
		Payload:     raw,
		Timestamp:   UnixSeconds(time.Now()),
		SessionID:   sessionID,
		OperationID: operationID,
	}, nil
}

// Decode unmarshals the payload into v.
func (m *EnhancedMessage) Decode(v any) error {
	if err := json.Unmarshal(m.Payload, v); err != nil {
		return fmt.Errorf("protocol: decoding %s payload of operation %s: %w", m.Type, m.OperationID, err)
	}
	return nil
}

// UnixSeconds is t as float Unix seconds, the protocol's timestamp unit.
func UnixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// Hotfix is an operation's Hot-Fix policy: when perception may interrupt it.
type Hotfix string

// Hot-Fix policies (PERCEPTION.md).
const (
	HotfixOff       Hotfix = "off"
	HotfixOnError   Hotfix = "on_error" // the default
	HotfixOnWarning Hotfix = "on_warning"
)

// Interrupts reports whether verdict v interrupts an operation run under policy h: off never
// does; on_error (the default, also for an empty or unknown policy) interrupts on Error;
// on_warning on Warning or Error.
func (h Hotfix) Interrupts(v *Verdict) bool {
	if v == nil {
		return false
	}
	switch h {
	case HotfixOff:
		return false
	case HotfixOnWarning:
		return v.State == Warning || v.State == Error
	default:
		return v.State == Error
	}
}

// Request is the payload of operation_request.
type Request struct {
	Kind string `json:"kind"` // "exec", …
	// Name says what the cell is, for people looking for it: the file it was read from
	// (labmate exec run.py). A session is listed under its first request's name.
	Name     string   `json:"name,omitempty"`
	Kernel   string   `json:"kernel,omitempty"`
	Code     string   `json:"code,omitempty"`
	TimeoutS float64  `json:"timeout_s,omitempty"`
	Hotfix   Hotfix   `json:"hotfix,omitempty"`
	Watch    []string `json:"watch,omitempty"`
	// ExpectSilenceS declares how long the code may legitimately compute without output.
	ExpectSilenceS float64 `json:"expect_silence_s,omitempty"`
	// Profile names the software whose output perception reads ("qe", "lammps", "octave",
	// "python", "shell", "generic"); empty: chosen from the kernel and the code.
	Profile string `json:"profile,omitempty"`
	// Perception tunes perception's detectors for this run: threshold KEY → VALUE
	// ("silence": "20s", "divergence_bound": "1e50"), or a detector's name → "off".
	Perception map[string]string `json:"perception,omitempty"`
	// Follow names workspace files (relative paths) whose appended lines are observed while
	// the cell runs, e.g. a log the code writes instead of printing.
	Follow []string `json:"follow,omitempty"`
	// Job is the job an operation of kind "job" submits: a job.Spec as JSON (package job
	// defines it; protocol imports no other package). Its command or script, profile,
	// resources, follow files and hotfix policy are the job's; Watch, Perception and
	// ExpectSilenceS tune perception as for an exec.
	Job json.RawMessage `json:"job,omitempty"`
}

// JobInfo names the job an operation of kind "job" runs and says where it is (extension):
// in operation_ack (submitted: the id and, when known, the scheduler's native id), in
// operation_start (RUNNING), and in the terminal message's Result (how the job ended).
type JobInfo struct {
	ID     string `json:"id"`               // the scheduler's job id ("local-…", "slurm-…")
	Native string `json:"native,omitempty"` // the scheduler's own id: a Slurm job id, a local pid
	State  string `json:"state,omitempty"`  // the job's state: QUEUED, RUNNING, COMPLETED, CANCELLED, …
	Reason string `json:"reason,omitempty"` // why it is queued, failed, or was cancelled (and by whom)
	Signal string `json:"signal,omitempty"` // the signal that ended it, e.g. SIGKILL
}

// StatePayload is the payload of operation_ack and operation_start.
type StatePayload struct {
	State State    `json:"state"`
	Job   *JobInfo `json:"job,omitempty"` // an operation of kind "job": its job
}

// Progress is the payload of operation_progress: an observation and/or a verdict.
type Progress struct {
	Observation *Observation `json:"observation,omitempty"`
	Verdict     *Verdict     `json:"verdict,omitempty"`
}

// Complete is the payload of operation_complete.
type Complete struct {
	Result *Result `json:"result"`
}

// Reason says why an operation failed.
type Reason string

// Failure reasons (PROTOCOL.md).
const (
	ReasonError         Reason = "error"
	ReasonTimeout       Reason = "timeout"
	ReasonInterrupted   Reason = "interrupted"
	ReasonRejected      Reason = "rejected"
	ReasonServerRestart Reason = "server_restart"
	ReasonCrashed       Reason = "crashed" // the interpreter died; its workspace is lost
	// ReasonProcessDied ends a run whose labmate run process stopped (was killed) without
	// ending it.
	ReasonProcessDied Reason = "process_died"
)

// Failed is the payload of operation_failed.
type Failed struct {
	Reason  Reason   `json:"reason"`
	Error   string   `json:"error,omitempty"`
	Verdict *Verdict `json:"verdict,omitempty"` // the evidence when perception interrupted the run
	Result  *Result  `json:"result,omitempty"`  // the partial result
}

// RunEnd is the payload of run_end: how an agent run's stream ended.
type RunEnd struct {
	// Reason is the agent's stop reason ("answered", "cancelled", …), ReasonError when the run
	// could not go on, or ReasonServerRestart when the server stopped while it ran.
	Reason Reason `json:"reason"`
	Error  string `json:"error,omitempty"`
	// Resumable says the run kept its checkpoint and can be continued; Resume says how.
	Resumable bool   `json:"resumable,omitempty"`
	Resume    string `json:"resume,omitempty"`
	// Job is the job a parked run waits for (reason "parked").
	Job string `json:"job,omitempty"`
}

// RunResume is the payload of run_resume: who resumed an ended, resumable run.
type RunResume struct {
	By string `json:"by,omitempty"` // e.g. "POST /v1/runs/ID/resume"
}

// SessionUpdate is the payload of session_update: the session's name and whether it is closed
// (its kernels stopped; a new operation reopens it).
type SessionUpdate struct {
	Name   string `json:"name,omitempty"`
	Closed bool   `json:"closed,omitempty"`
}

// Interrupt is the payload of operation_interrupt. An operation_interrupt in the log is also
// how one labmate process asks another to stop an operation it runs: a server asked to
// interrupt the cell of a labmate run appends it (legal only while the operation is live, like
// any message), and the runner of the process that runs the operation, which follows what
// others append to the log, stops it; the operation_failed that process appends records the
// outcome (package runner).
type Interrupt struct {
	Why string `json:"why,omitempty"`
}

// Status is how one cell ended.
type Status string

// Cell statuses.
const (
	StatusOK          Status = "ok"
	StatusError       Status = "error"
	StatusInterrupted Status = "interrupted"
	StatusTimeout     Status = "timeout"
	StatusCrashed     Status = "crashed"
)

// Result is how a cell (or another operation) ended.
type Result struct {
	Status      Status   `json:"status"`
	DurationS   float64  `json:"duration_s"`
	Error       string   `json:"error,omitempty"`     // the error message for error/crashed/timeout
	Line        int      `json:"line,omitempty"`      // the cell line the error points at, when known
	OutputBytes int64    `json:"output_bytes"`        // stdout+stderr bytes the cell wrote
	Truncated   bool     `json:"truncated,omitempty"` // output beyond the cap was dropped
	ExitCode    *int     `json:"exit_code,omitempty"` // the interpreter's exit code when it died
	WorkspaceOK bool     `json:"workspace_kept"`      // variables survive for the next cell
	Job         *JobInfo `json:"job,omitempty"`       // an operation of kind "job": how its job ended
}

// ObservationKind says what an Observation carries.
type ObservationKind string

// Observation kinds.
const (
	ObsStdout    ObservationKind = "stdout"
	ObsStderr    ObservationKind = "stderr"
	ObsTelemetry ObservationKind = "telemetry"
	ObsResource  ObservationKind = "resource"
	ObsEvent     ObservationKind = "event"
	ObsFile      ObservationKind = "file"     // a line appended to a followed workspace file (Path)
	ObsArtifact  ObservationKind = "artifact" // a file the cell created or changed in its workspace (Artifact)
)

// Observation is one thing seen while an operation runs.
type Observation struct {
	Kind ObservationKind `json:"kind"`
	// Time is when labmate read it (wall clock with Go's monotonic reading in-process).
	Time time.Time `json:"time"`
	Line string    `json:"line,omitempty"` // stdout / stderr / file, without the newline
	Path string    `json:"path,omitempty"` // file: the followed file, relative to the workspace
	// JobSeq is a job's log line number (job.Line.Seq) of a stdout, stderr or file
	// observation of an operation of kind "job": where a follower reattached after a restart
	// resumes reading the job's log.
	JobSeq   int64     `json:"job_seq,omitempty"`
	Sample   *Sample   `json:"sample,omitempty"`
	Resource *Resource `json:"resource,omitempty"`
	Event    *Event    `json:"event,omitempty"`
	Artifact *Artifact `json:"artifact,omitempty"`
}

// Artifact is a file a cell created or changed in its workspace: a figure it printed, a
// table it saved. Clients fetch its bytes from the server by Path.
type Artifact struct {
	Path     string `json:"path"`             // relative to the workspace, slash-separated
	MIMEType string `json:"mime_type"`        // from the name's extension (ArtifactType)
	Size     int64  `json:"size"`             // bytes when the cell ended
	SHA256   string `json:"sha256,omitempty"` // hex digest of those bytes; empty for a file too large to hash
}

// Validate reports what is wrong with an artifact a peer sent: a path that is not a local,
// slash-separated one inside the workspace or not printable UTF-8 (a terminal would obey
// the escapes of a hostile file name), a missing or malformed MIME type, a negative size
// or a digest that is not 64 lower-case hex digits. Its errors wrap ErrInvalidMessage.
func (a *Artifact) Validate() error {
	switch {
	case a.Path == "" || !filepath.IsLocal(a.Path) || strings.ContainsRune(a.Path, '\\') || path.Clean(a.Path) != a.Path:
		return fmt.Errorf("%w: artifact path %q is not a relative path inside the workspace", ErrInvalidMessage, a.Path)
	case !utf8.ValidString(a.Path) || strings.ContainsFunc(a.Path, unicode.IsControl):
		return fmt.Errorf("%w: artifact path %q is not printable UTF-8", ErrInvalidMessage, a.Path)
	case a.Size < 0:
		return fmt.Errorf("%w: artifact %s: negative size %d", ErrInvalidMessage, a.Path, a.Size)
	case len(a.SHA256) != 0 && (len(a.SHA256) != sha256.Size*2 || strings.Trim(a.SHA256, "0123456789abcdef") != ""):
		return fmt.Errorf("%w: artifact %s: sha256 %q is not 64 lower-case hex digits", ErrInvalidMessage, a.Path, a.SHA256)
	}
	if mt, _, err := mime.ParseMediaType(a.MIMEType); err != nil || mt != a.MIMEType {
		return fmt.Errorf("%w: artifact %s: MIME type %q is not a bare type/subtype", ErrInvalidMessage, a.Path, a.MIMEType)
	}
	return nil
}

// artifactTypes are the MIME types of the extensions labmate names itself, so that a type
// does not depend on the machine's /etc/mime.types.
var artifactTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".svg": "image/svg+xml", ".pdf": "application/pdf", ".eps": "application/postscript", ".ps": "application/postscript",
	".csv": "text/csv", ".tsv": "text/tab-separated-values", ".txt": "text/plain", ".log": "text/plain", ".out": "text/plain",
	".dat": "text/plain", ".json": "application/json", ".html": "text/html", ".htm": "text/html", ".xml": "application/xml",
	".mat": "application/x-matlab-data", ".npy": "application/x-npy", ".npz": "application/zip", ".zip": "application/zip",
	".h5": "application/x-hdf5", ".hdf5": "application/x-hdf5", ".nc": "application/x-netcdf",
}

// ArtifactType is the MIME type of a workspace file, from its name's extension (in any
// case); application/octet-stream for an extension it does not know.
func ArtifactType(name string) string {
	if t, ok := artifactTypes[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	return "application/octet-stream"
}

// InlineArtifact reports whether a file of MIME type t is passive content a browser may
// show in place: a raster image (PNG, JPEG, GIF, WebP), a PDF, CSV or plain text. Anything
// else — HTML, SVG and XML, which can carry script — is only ever downloaded.
func InlineArtifact(t string) bool {
	switch t {
	case "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "text/csv", "text/tab-separated-values", "text/plain":
		return true
	}
	return false
}

// SampleSource says where a telemetry sample came from.
type SampleSource string

// Sample sources.
const (
	FromHelper SampleSource = "helper" // labmate_log / labmate.log, via the side channel
	FromStdout SampleSource = "stdout" // parsed from a printed line (`name = value`, a table row, …)
	FromFile   SampleSource = "file"   // parsed from a line of a followed file
)

// Sample is one telemetry value. Value holds a scalar; Values a vector (then Value is its first element).
type Sample struct {
	Name   string       `json:"name"`
	Value  float64      `json:"value"`
	Values []float64    `json:"values,omitempty"`
	T      *float64     `json:"t,omitempty"` // simulation time, when given
	Source SampleSource `json:"source"`
}

// Resource is a resource sample of the interpreter process tree.
type Resource struct {
	CPUSeconds  float64 `json:"cpu_s"`
	RSSBytes    int64   `json:"rss_bytes"`
	WallSeconds float64 `json:"wall_s"`
	OutputBytes int64   `json:"output_bytes"`
	MemoryLimit int64   `json:"memory_limit_bytes,omitempty"`
	OutputLimit int64   `json:"output_limit_bytes,omitempty"`
	// Runnable: a process of the tree was running or waiting for a CPU at the sample (state
	// R), not sleeping on a lock, a pipe or a timer. On a crowded machine a loop that gets
	// little CPU time is still runnable.
	Runnable bool `json:"runnable,omitempty"`
	// Loop: where the loop the program was running at the sample stands against its exits,
	// read inside the interpreter (nil where the kernel cannot look: only the Python kernel
	// samples its running frame).
	Loop *Loop `json:"loop,omitempty"`
}

// Loop is a while loop a program is running, seen from inside: its line and, for each
// comparison that ends it (its condition, or an `if … : break` in its body), how far the
// compared values are from each other (left − right) — the loop's distance to that exit. A
// loop that nears an exit makes progress however silent it is; one whose distances stay put,
// cycle or grow does not. Comparisons of two integers (a counter and its cap) and of
// wall-clock times (a guard) are left out: they say nothing about the computation.
type Loop struct {
	Line  int        `json:"line"`
	Exits []LoopExit `json:"exits"`
}

// LoopExit is one exit of a Loop: the line of its comparison and its distance (finite).
type LoopExit struct {
	Line     int     `json:"line"`
	Distance float64 `json:"distance"`
}

// EventName names a kernel event.
type EventName string

// Kernel events.
const (
	EventStarted     EventName = "started"
	EventFinished    EventName = "finished"
	EventInterrupted EventName = "interrupted"
	EventCrashed     EventName = "crashed"
	EventTruncated   EventName = "truncated"
	EventRestarted   EventName = "restarted"
)

// Event is a kernel lifecycle event.
type Event struct {
	Name   EventName `json:"name"`
	Detail string    `json:"detail,omitempty"`
}

// Verdict is perception's judgement of the stream (PERCEPTION.md).
type Verdict struct {
	State    VerdictState `json:"state"`
	Detector string       `json:"detector"`
	Message  string       `json:"message"`
	Evidence []string     `json:"evidence,omitempty"`
	Severity float64      `json:"severity"`
	Action   Action       `json:"action"`
	// Role names the role of the series the verdict is about and why it was assigned
	// ("||F|| (printed): residual, its name says …"); empty when no series' role mattered.
	Role string `json:"role,omitempty"`
	// Correction is the fix the code's documentation suggests for this fault ("lower
	// mixing_beta …", "reduce the timestep …"), for the agent's repair and for a human; empty
	// when none is known.
	Correction string `json:"correction,omitempty"`
}

// VerdictState is Normal, Warning or Error.
type VerdictState string

// Verdict states.
const (
	Normal  VerdictState = "Normal"
	Warning VerdictState = "Warning"
	Error   VerdictState = "Error"
)

// Action is what a verdict suggests.
type Action string

// Suggested actions.
const (
	ActionContinue  Action = "continue"
	ActionInterrupt Action = "interrupt"
	ActionAnnotate  Action = "annotate"
)

// Outcome is the terminal message type and payload that report a cell's result:
// operation_complete for ok, operation_failed with the matching reason otherwise.
func Outcome(r *Result) (Type, any) {
	reason := ReasonError
	switch r.Status {
	case StatusOK:
		return TypeComplete, &Complete{Result: r}
	case StatusTimeout:
		reason = ReasonTimeout
	case StatusInterrupted:
		reason = ReasonInterrupted
	case StatusCrashed:
		reason = ReasonCrashed
	}
	return TypeFailed, &Failed{Reason: reason, Error: r.Error, Result: r}
}

// DecodePayload returns m's payload as its typed value: *Request, *StatePayload, *Progress,
// *Complete, *Failed, *Interrupt, *RunEnd, or a *json.RawMessage holding a run_event's event
// (a JSON object). An artifact observation must carry a valid Artifact
// (Artifact.Validate): a client builds paths and URLs from it.
func DecodePayload(m *EnhancedMessage) (any, error) {
	var v any
	switch m.Type {
	case TypeRequest:
		v = &Request{}
	case TypeAck, TypeStart:
		v = &StatePayload{}
	case TypeProgress:
		v = &Progress{}
	case TypeComplete:
		v = &Complete{}
	case TypeFailed:
		v = &Failed{}
	case TypeInterrupt:
		v = &Interrupt{}
	case TypeRunEnd:
		v = &RunEnd{}
	case TypeRunEvent, TypeRunCheckpoint:
		v = &json.RawMessage{}
	case TypeRunResume:
		v = &RunResume{}
	case TypeSessionUpdate:
		v = &SessionUpdate{}
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownType, m.Type)
	}
	if err := m.Decode(v); err != nil {
		return nil, err
	}
	if m.Type == TypeRunEvent || m.Type == TypeRunCheckpoint || m.Type == TypeRunEnd || m.Type == TypeSessionUpdate {
		if _, err := Check(m); err != nil {
			return nil, err
		}
	}
	if p, ok := v.(*Progress); ok && p.Observation != nil && p.Observation.Kind == ObsArtifact {
		if p.Observation.Artifact == nil {
			return nil, fmt.Errorf("%w: artifact observation of operation %s without an artifact", ErrInvalidMessage, m.OperationID)
		}
		if err := p.Observation.Artifact.Validate(); err != nil {
			return nil, fmt.Errorf("operation %s: %w", m.OperationID, err)
		}
	}
	return v, nil
}
