// Package report prints one operation's messages as a terminal user expects them: the
// program's stdout and stderr where they belong, labmate's notes on stderr.
package report

import (
	"fmt"
	"io"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/protocol"
)

// Reporter prints one operation's messages.
type Reporter interface {
	Message(t protocol.Type, payload any) error
}

// NewText prints output as a terminal user expects: stdout lines to stdout, stderr lines to
// stderr, labmate's own notes (verdicts, artifacts, the outcome, a hot-fix under the policy)
// to stderr prefixed "labmate:". An artifact is printed as where says it is: a path, or a
// server's URL.
func NewText(stdout, stderr io.Writer, hotfix protocol.Hotfix, where func(rel string) string) Reporter {
	return &textReporter{stdout: stdout, stderr: stderr, hotfix: hotfix, where: where}
}

type textReporter struct {
	stdout, stderr io.Writer
	hotfix         protocol.Hotfix
	where          func(rel string) string
}

func (r *textReporter) Message(t protocol.Type, payload any) error {
	switch p := payload.(type) {
	case *protocol.Progress:
		if v := p.Verdict; v != nil {
			fmt.Fprintf(r.stderr, "labmate: [%s] %s\n", v.State, verdictText(v))
			if r.hotfix.Interrupts(v) {
				fmt.Fprintf(r.stderr, "labmate: hot-fix (%s): interrupting\n", r.hotfix)
			}
		}
		o := p.Observation
		switch {
		case o == nil:
		case o.Kind == protocol.ObsStdout:
			fmt.Fprintln(r.stdout, o.Line)
		case o.Kind == protocol.ObsStderr:
			fmt.Fprintln(r.stderr, o.Line)
		case o.Kind == protocol.ObsArtifact && o.Artifact != nil:
			fmt.Fprintf(r.stderr, "labmate: artifact %s (%s, %d bytes): %s\n", o.Artifact.Path, o.Artifact.MIMEType, o.Artifact.Size, r.where(o.Artifact.Path))
		case o.Event != nil && o.Event.Name == protocol.EventTruncated:
			fmt.Fprintln(r.stderr, "labmate: output truncated:", o.Event.Detail)
		}
	case *protocol.Complete:
		fmt.Fprintf(r.stderr, "labmate: ok in %.3fs\n", p.Result.DurationS)
	case *protocol.Failed:
		switch {
		case p.Result != nil && p.Verdict != nil && p.Reason == protocol.ReasonInterrupted:
			fmt.Fprintf(r.stderr, "labmate: stopped by perception after %.3fs (%s); the workspace is kept\n", p.Result.DurationS, verdictText(p.Verdict))
		case p.Result == nil:
			fmt.Fprintf(r.stderr, "labmate: failed: %s\n", p.Error)
		case p.Result.Line > 0:
			fmt.Fprintf(r.stderr, "labmate: %s at line %d after %.3fs: %s\n", p.Reason, p.Result.Line, p.Result.DurationS, textcut.FirstLine(p.Error))
		default:
			fmt.Fprintf(r.stderr, "labmate: %s after %.3fs: %s\n", p.Reason, p.Result.DurationS, textcut.FirstLine(p.Error))
		}
	}
	return nil
}

func verdictText(v *protocol.Verdict) string {
	if v.State == protocol.Normal {
		return "back to normal"
	}
	s := v.Detector + ": " + v.Message
	if v.Correction != "" {
		s += "; suggested fix: " + v.Correction
	}
	return s
}
