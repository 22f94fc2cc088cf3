package operation

import "github.com/labmate/labmate/protocol"

// Cell is the input of the exec capability, written once: the agent's run_code tool is a
// Cell, MCP's exec is a Cell and the session to run it in, and labmate exec's flags fill
// one. Its JSON Schema (from the field tags) is what a model sees. Request turns it into the
// protocol's operation_request, which Check validates — the one set of rules for every caller,
// REST and WebSocket clients included, which send the request itself.
type Cell struct {
	Code   string   `json:"code" jsonschema:"the code to run, as one cell; the kernel keeps variables and files between cells"`
	Kernel string   `json:"kernel,omitempty" jsonschema:"the kernel to run it in: octave, python or shell (an agent's default: its task's kernel)"`
	Watch  []string `json:"watch,omitempty" jsonschema:"constraints perception enforces while the code runs, on series logged with labmate_log/labmate.log or printed as 'name = value': 'x < 1e6', 'finite(x)', 'residual decreasing', 'energy increasing', 't in [0, 5]'"`
	Hotfix string   `json:"hotfix,omitempty" jsonschema:"when perception interrupts the run: on_error (default), on_warning or off"`
	// TimeoutS bounds the cell's wall time.
	TimeoutS float64 `json:"timeout_s,omitempty" jsonschema:"wall-clock limit in seconds (default: the caller's; an agent's is 300)"`
	// ExpectSilenceS declares a legitimately silent computation (it passes the stagnation detector).
	ExpectSilenceS float64 `json:"expect_silence_s,omitempty" jsonschema:"how long the code may legitimately compute without printing, in seconds"`
	Profile        string  `json:"profile,omitempty" jsonschema:"the software whose output perception reads: qe, lammps, octave, python, shell or generic (default: chosen from the kernel and the code)"`
	// Perception and Follow are protocol.Request's.
	Perception map[string]string `json:"perception,omitempty" jsonschema:"perception settings for this run: a threshold KEY to VALUE (silence: 20s, divergence_bound: 1e50) or a detector's name to off"`
	Follow     []string          `json:"follow,omitempty" jsonschema:"workspace files (relative paths) whose appended lines perception reads while the cell runs, e.g. a log the code (pw.x, LAMMPS) writes"`
}

// Request is the cell as an exec operation_request. It is not checked here: Check (which
// operation.Run and the server run on every request) is where the rules are.
func (c *Cell) Request() *protocol.Request {
	return &protocol.Request{Kind: "exec", Kernel: c.Kernel, Code: c.Code, Watch: c.Watch,
		Hotfix: protocol.Hotfix(c.Hotfix), TimeoutS: c.TimeoutS, ExpectSilenceS: c.ExpectSilenceS,
		Profile: c.Profile, Perception: c.Perception, Follow: c.Follow}
}
