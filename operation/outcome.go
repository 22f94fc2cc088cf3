package operation

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/protocol"
)

// Outcome is how one exec operation ended, collected from its stream of messages (Add) —
// the one summary of a cell that the agent's run_code, MCP's exec and their models read
// (Text). Its output keeps the first and the last lines (where the set-up and the result
// and the error are) within OutputLimits, saying how much was cut between them; perception's
// verdicts are listed once each. Its JSON is part of the agent's checkpoints: rename no field.
type Outcome struct {
	OperationID string          `json:"operation_id"`
	Kernel      string          `json:"kernel"`
	Code        string          `json:"code"`
	OK          bool            `json:"ok"`               // operation_complete
	Reason      protocol.Reason `json:"reason,omitempty"` // why it failed
	Error       string          `json:"error,omitempty"`
	Line        int             `json:"line,omitempty"`    // the cell line the error points at
	HotFix      bool            `json:"hot_fix,omitempty"` // perception stopped it
	// Verdict is the verdict a failure rests on: the one that triggered the Hot-Fix, or
	// perception's last when the cell failed by itself.
	Verdict *protocol.Verdict `json:"verdict,omitempty"`
	// Verdicts are perception's verdicts, each once, in the order first seen (at most 32;
	// Verdict is always among them).
	Verdicts []protocol.Verdict `json:"verdicts,omitempty"`
	// Output is stdout and stderr (its lines prefixed "stderr: ") interleaved: the first and
	// the last lines, with a line "[… N lines elided (M bytes) …]" where some were cut.
	Output string `json:"output"`
	// OutputCut counts the lines cut from the middle of Output.
	OutputCut int     `json:"output_cut,omitempty"`
	DurationS float64 `json:"duration_s"`
	// Result is the kernel's result of the cell (nil when it never ran).
	Result *protocol.Result `json:"result,omitempty"`
	// Artifacts are the workspace files the cell created or changed (figures, tables).
	Artifacts []protocol.Artifact `json:"artifacts,omitempty"`
}

// Collector gathers an operation's stream, a message at a time, into its Outcome.
type Collector struct {
	Outcome
	buf outputBuf
}

// OutputLimits bound the output an Outcome keeps. Zero values mean the defaults.
type OutputLimits struct {
	// Lines is how many of the first lines and of the last lines are kept (default: as many
	// as Bytes holds).
	Lines int
	// Bytes bounds the output kept, half for the first lines and half for the last
	// (default 64 KiB).
	Bytes int
}

const maxVerdicts = 32

// Collect returns a collector of the outcome of operation id, running code in kernel.
func Collect(id, kernel, code string, limits *OutputLimits) *Collector {
	var l OutputLimits
	if limits != nil {
		l = *limits
	}
	if l.Bytes <= 0 {
		l.Bytes = 64 << 10
	}
	return &Collector{Outcome: Outcome{OperationID: id, Kernel: kernel, Code: code}, buf: outputBuf{lines: l.Lines, bytes: max(l.Bytes/2, 1)}}
}

// Status is "completed", "failed", or "" before the terminal message.
func (o *Outcome) Status() string {
	switch {
	case o.OK:
		return "completed"
	case o.Reason != "":
		return "failed"
	}
	return ""
}

// Add takes the next message of the operation's stream: output lines, verdicts, artifacts and
// the terminal message (which sets Output). The request, the ack and the start change nothing.
func (o *Collector) Add(m *Message) {
	switch p := m.Payload.(type) {
	case *protocol.Progress:
		if ob := p.Observation; ob != nil {
			switch ob.Kind {
			case protocol.ObsStdout:
				o.buf.add(ob.Line)
			case protocol.ObsStderr:
				o.buf.add("stderr: " + ob.Line)
			case protocol.ObsArtifact:
				if ob.Artifact != nil {
					o.Artifacts = append(o.Artifacts, *ob.Artifact)
				}
			}
		}
		if p.Verdict != nil {
			o.verdict(p.Verdict, false)
		}
	case *protocol.Complete:
		o.OK, o.Result = true, p.Result
		if p.Result != nil {
			o.DurationS = p.Result.DurationS
		}
		o.Output, o.OutputCut = o.buf.String(), o.buf.cut
	case *protocol.Failed:
		o.Reason, o.Error, o.Result = p.Reason, p.Error, p.Result
		if p.Result != nil {
			o.DurationS, o.Line = p.Result.DurationS, p.Result.Line
		}
		if p.Verdict != nil {
			v := *p.Verdict
			o.Verdict = &v
			o.verdict(p.Verdict, true)
		}
		o.HotFix = p.Reason == protocol.ReasonInterrupted && p.Verdict != nil
		o.Output, o.OutputCut = o.buf.String(), o.buf.cut
	}
}

// verdict lists v unless the same verdict is listed; beyond maxVerdicts only a terminal one.
func (o *Outcome) verdict(v *protocol.Verdict, terminal bool) {
	for _, w := range o.Verdicts {
		if sameVerdict(&w, v) {
			return
		}
	}
	if len(o.Verdicts) < maxVerdicts || terminal {
		o.Verdicts = append(o.Verdicts, *v)
	}
}

// Text is the outcome as a model reads it: how the cell ended, the error, perception's
// verdicts that were not Normal (each once), the output and the files written.
func (o *Outcome) Text() string { return o.TextWhere(nil) }

// TextWhere is Text with each file written followed by where it can be read, when where
// (given the artifact's workspace path) says: a resource's URI, a server's URL.
func (o *Outcome) TextWhere(where func(path string) string) string {
	var b strings.Builder
	switch {
	case o.OperationID == "": // not an operation: a claim made without running code
	case o.OK:
		fmt.Fprintf(&b, "operation %s completed in %.2fs.\n", o.OperationID, o.DurationS)
	case o.HotFix:
		fmt.Fprintf(&b, "operation %s was INTERRUPTED by perception after %.2fs (hot-fix); the workspace is kept.\n", o.OperationID, o.DurationS)
	default:
		fmt.Fprintf(&b, "operation %s FAILED (%s) after %.2fs", o.OperationID, o.Reason, o.DurationS)
		if o.Line > 0 {
			fmt.Fprintf(&b, " at line %d", o.Line)
		}
		b.WriteString(".\n")
		if r := o.Result; r != nil && !r.WorkspaceOK {
			b.WriteString("The kernel's workspace was lost: variables and imports must be set again.\n")
		}
	}
	if o.Error != "" && !o.HotFix {
		fmt.Fprintf(&b, "error: %s\n", textcut.HeadTail(o.Error, 10, 1500))
	}
	for i := range o.Verdicts {
		v := &o.Verdicts[i]
		if v.State == protocol.Normal {
			continue
		}
		fmt.Fprintf(&b, "perception: %s from %s: %s\n", v.State, v.Detector, v.Message)
		if o.Verdict == nil || v.Detector != o.Verdict.Detector || v.Message != o.Verdict.Message {
			continue // the evidence of the verdict the outcome rests on
		}
		for _, e := range v.Evidence {
			if !strings.Contains(o.Output, strings.TrimPrefix(e, "stderr: ")) { // said once is enough
				fmt.Fprintf(&b, "  evidence: %s\n", textcut.Head(e, 200))
			}
		}
	}
	if o.Output != "" {
		fmt.Fprintf(&b, "output:\n%s", o.Output)
	} else {
		b.WriteString("output: (none)\n")
	}
	if r := o.Result; r != nil && r.Truncated {
		b.WriteString("(the kernel dropped output beyond its cap)\n")
	}
	for _, a := range o.Artifacts {
		fmt.Fprintf(&b, "file written: %s (%s, %d bytes)", a.Path, a.MIMEType, a.Size)
		if where != nil {
			if w := where(a.Path); w != "" {
				b.WriteString(": " + w)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// outputBuf keeps the first and the last lines of a stream of unbounded length in bounded
// memory: up to lines lines (0: no count limit) and bytes bytes each.
type outputBuf struct {
	lines, bytes int

	head      []string
	headBytes int
	full      bool // the head is complete: lines go to the tail

	tail      []string // a queue: tail[start:]
	start     int
	tailBytes int

	cut      int   // lines dropped between head and tail
	cutBytes int64 // and their bytes
}

func (b *outputBuf) add(line string) {
	if !b.full {
		if (b.lines == 0 || len(b.head) < b.lines) && b.headBytes+len(line)+1 <= b.bytes {
			b.head = append(b.head, line)
			b.headBytes += len(line) + 1
			return
		}
		b.full = true
	}
	if len(line)+1 > b.bytes { // one line longer than the tail's budget: its beginning
		n := max(b.bytes-len("…")-1, 0)
		for n > 0 && !utf8.RuneStart(line[n]) {
			n--
		}
		line = line[:n] + "…"
	}
	b.tail = append(b.tail, line)
	b.tailBytes += len(line) + 1
	for b.lines > 0 && len(b.tail)-b.start > b.lines || b.tailBytes > b.bytes {
		l := b.tail[b.start]
		b.tail[b.start] = ""
		b.start++
		b.tailBytes -= len(l) + 1
		b.cut++
		b.cutBytes += int64(len(l) + 1)
	}
	if b.start > 64 && b.start > len(b.tail)/2 { // compact the queue
		b.tail = append(b.tail[:0], b.tail[b.start:]...)
		b.start = 0
	}
}

func (b *outputBuf) String() string {
	var sb strings.Builder
	for _, l := range b.head {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	if b.cut > 0 {
		fmt.Fprintf(&sb, "[… %d lines elided (%s) …]\n", b.cut, size(b.cutBytes))
	}
	for _, l := range b.tail[b.start:] {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	return sb.String()
}

func size(n int64) string {
	switch {
	case n < 10<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 10<<20:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}
