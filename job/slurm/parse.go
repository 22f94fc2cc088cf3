package slurm

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/labmate/labmate/job"
)

// parseSbatch reads `sbatch --parsable` output: "jobid" or "jobid;cluster".
func parseSbatch(out string) (string, error) {
	line := strings.TrimSpace(out)
	if i := strings.LastIndexByte(line, '\n'); i >= 0 { // warnings may come first
		line = strings.TrimSpace(line[i+1:])
	}
	id, _, _ := strings.Cut(line, ";")
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		return "", fmt.Errorf("sbatch --parsable printed %q, not a job id", out)
	}
	return id, nil
}

// info is what `scontrol -o show job` says of one job.
type info struct {
	JobID    string
	Name     string
	State    string // Slurm's: PENDING, RUNNING, COMPLETED, OUT_OF_MEMORY, …
	Reason   string // "None" when there is none
	Exit     int    // ExitCode N:S
	Sig      int
	RunTime  time.Duration
	Limit    string // TimeLimit as printed
	Submit   time.Time
	Start    time.Time
	End      time.Time
	MemLimit string // MinMemoryNode, e.g. "1G"
	Ran      bool   // it was given a node (BatchHost), so it started
}

// parseScontrol reads one line of `scontrol -o show job N`. The line is space-separated
// Key=Value pairs, but JobName (second, set by whoever submitted) may hold spaces, '=' and
// '|': it is everything between " JobName=" and " UserId=", which Slurm prints next. Of the
// other keys the first occurrence counts; the user-set paths (WorkDir, StdOut, Command) come
// after the fields read here.
func parseScontrol(line string) (*info, error) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "JobId=") {
		return nil, fmt.Errorf("scontrol show job: unexpected output %q", trim(line))
	}
	in := &info{}
	rest := line
	if i := strings.Index(line, " JobName="); i >= 0 {
		in.JobID = strings.TrimPrefix(line[:i], "JobId=")
		after := line[i+len(" JobName="):]
		if j := strings.Index(after, " UserId="); j >= 0 {
			in.Name = after[:j]
			rest = after[j+1:]
		} else {
			rest = after
		}
	}
	kv := map[string]string{}
	for _, tok := range strings.Split(rest, " ") {
		k, v, ok := strings.Cut(tok, "=")
		if !ok {
			continue
		}
		if _, seen := kv[k]; !seen {
			kv[k] = v
		}
	}
	if in.JobID == "" {
		in.JobID = kv["JobId"]
	}
	in.State = kv["JobState"]
	if in.State == "" {
		return nil, fmt.Errorf("scontrol show job: no JobState in %q", trim(line))
	}
	in.Reason = kv["Reason"]
	if e, s, ok := strings.Cut(kv["ExitCode"], ":"); ok {
		in.Exit, _ = strconv.Atoi(e)
		in.Sig, _ = strconv.Atoi(s)
	}
	in.RunTime = parseDuration(kv["RunTime"])
	in.Limit = kv["TimeLimit"]
	in.Submit = parseTime(kv["SubmitTime"])
	in.Start = parseTime(kv["StartTime"])
	in.End = parseTime(kv["EndTime"])
	in.MemLimit = kv["MinMemoryNode"]
	in.Ran = kv["BatchHost"] != "" && kv["BatchHost"] != "(null)"
	return in, nil
}

// parseSacct reads `sacct --parsable2 -n -X -o JobID,JobName,State,ExitCode,Submit,Start,End`;
// the name, which may hold '|', is the second field, so the last five are counted from the end.
func parseSacct(out, native string) (*info, error) {
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) < 7 || f[0] != native {
			continue
		}
		n := len(f)
		in := &info{JobID: f[0], Name: strings.Join(f[1:n-5], "|"), Reason: "None"}
		in.State, _, _ = strings.Cut(f[n-5], " ") // "CANCELLED by 0"
		if e, s, ok := strings.Cut(f[n-4], ":"); ok {
			in.Exit, _ = strconv.Atoi(e)
			in.Sig, _ = strconv.Atoi(s)
		}
		in.Submit, in.Start, in.End = parseTime(f[n-3]), parseTime(f[n-2]), parseTime(f[n-1])
		in.Ran = !in.Start.IsZero() && in.State != "CANCELLED" || in.End.After(in.Start)
		return in, nil
	}
	return nil, fmt.Errorf("sacct: no line for job %s in %q", native, trim(out))
}

// sigOOM is the signal number Slurm records (ExitCode 0:125) for a job its cgroup's
// out-of-memory killer stopped; the kernel sent SIGKILL.
const sigOOM = 125

// status maps Slurm's view of a job onto job.Status (ID, Name, Spec and Submitted are the
// caller's).
func (in *info) status() *job.Status {
	st := &job.Status{Native: in.JobID}
	base, _, _ := strings.Cut(in.State, "+") // e.g. "CANCELLED+" in some versions
	reason := in.Reason
	if reason == "None" || reason == "(null)" {
		reason = ""
	}
	ran := in.Ran
	switch base {
	case "PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SPECIAL_EXIT":
		st.State = job.Queued
		st.Reason = reason
		if reason == "" { // just submitted: the controller has not looked at it yet
			st.Reason = "waiting for Slurm to schedule it"
		}
		return st
	case "RUNNING", "CONFIGURING", "COMPLETING", "SIGNALING", "STAGE_OUT", "RESIZING", "SUSPENDED", "STOPPED":
		st.State = job.Running
		if base == "SUSPENDED" || base == "STOPPED" {
			st.Reason = strings.ToLower(base)
		}
		st.Started = in.Start
		return st
	case "COMPLETED":
		st.State = job.Completed
	case "FAILED", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "PREEMPTED", "DEADLINE", "REVOKED":
		st.State = job.Failed
	case "CANCELLED":
		st.State = job.Cancelled
	case "TIMEOUT":
		st.State = job.TimedOut
	default:
		st.State = job.Failed
		reason = "unknown Slurm state " + in.State
	}
	if base != "CANCELLED" || ran {
		st.Started = in.Start
	}
	st.Ended = in.End
	switch {
	case base == "OUT_OF_MEMORY" || in.Sig == sigOOM:
		st.Signal = "SIGKILL"
		st.Reason = "out of memory: exceeded its memory limit"
		if in.MemLimit != "" {
			st.Reason += " of " + in.MemLimit
		}
		return st
	case in.Sig != 0:
		st.Signal = signalName(in.Sig)
	case base == "CANCELLED" && !ran:
	default:
		code := in.Exit
		st.ExitCode = &code
	}
	switch base {
	case "TIMEOUT":
		st.Reason = "ran past its wall time"
		if in.Limit != "" {
			st.Reason += " (Slurm TimeLimit " + in.Limit + ")"
		}
	case "FAILED":
		switch {
		case st.Signal != "":
			st.Reason = "killed by " + st.Signal
		case st.ExitCode != nil:
			st.Reason = fmt.Sprintf("exit code %d", *st.ExitCode)
		default:
			st.Reason = reason
		}
	case "COMPLETED", "CANCELLED":
	default:
		st.Reason = strings.ToLower(strings.ReplaceAll(base, "_", " "))
		if reason != "" {
			st.Reason += ": " + reason
		}
	}
	return st
}

func signalName(n int) string {
	if name := unix.SignalName(syscall.Signal(n)); name != "" {
		return name
	}
	return "signal " + strconv.Itoa(n)
}

// parseTime reads Slurm's local times ("2026-12-02T01:59:04"); "Unknown", "None" and "N/A"
// are zero.
func parseTime(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02T15:04:05", s, time.Local)
	if err != nil {
		return time.Time{}
	}
	return t
}

// parseDuration reads Slurm's [days-]hh:mm:ss.
func parseDuration(s string) time.Duration {
	var days int
	if d, rest, ok := strings.Cut(s, "-"); ok {
		days, _ = strconv.Atoi(d)
		s = rest
	}
	parts := strings.Split(s, ":")
	var secs int
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return 0
		}
		secs = secs*60 + n
	}
	return time.Duration(days)*24*time.Hour + time.Duration(secs)*time.Second
}

func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
