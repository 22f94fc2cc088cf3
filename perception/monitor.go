package perception

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/labmate/labmate/protocol"
)

// Detector names, as they appear in Verdict.Detector.
const (
	DetectorLanguage    = "language"
	DetectorNonFinite   = "nonfinite"
	DetectorConstraint  = "constraint"
	DetectorDivergence  = "divergence"
	DetectorOscillation = "oscillation"
	DetectorStagnation  = "stagnation"
	DetectorResources   = "resources"
	// DetectorStall reports a residual that stopped improving on its best while it bounces
	// far above it (see Role).
	DetectorStall = "stall"
	// DetectorDrift reports a conserved quantity drifting away from its start.
	DetectorDrift = "drift"
	// DetectorSetpoint reports a controlled quantity far from the setpoint the code declares
	// for a sustained stretch.
	DetectorSetpoint = "setpoint"
	// DetectorRange reports a quantity outside its physical range: a negative absolute
	// temperature, a probability outside [0, 1].
	DetectorRange = "range"
	// DetectorProfile reports a software profile's fault signatures (Quantum ESPRESSO's error
	// blocks and SCF, LAMMPS' errors and explosions); the message names the software.
	DetectorProfile = "profile"
)

// detector indexes the Monitor's slots; the order breaks ties between detectors that report
// the same state at the same time.
type detector int

const (
	detLanguage detector = iota
	detNonFinite
	detConstraint
	detDivergence
	detOscillation
	detStagnation
	detResources
	detProfile
	detStall
	detDrift
	detSetpoint
	detRange
	numDetectors
)

var detectorNames = [numDetectors]string{
	DetectorLanguage, DetectorNonFinite, DetectorConstraint, DetectorDivergence,
	DetectorOscillation, DetectorStagnation, DetectorResources, DetectorProfile,
	DetectorStall, DetectorDrift, DetectorSetpoint, DetectorRange,
}

// Evidence bounds: a verdict carries at most maxEvidence items of at most maxEvidenceLen bytes.
const (
	maxEvidence    = 5
	maxEvidenceLen = 200
	// maxSeries bounds the telemetry series tracked per operation; samples of further series
	// (unless watched) only go through the non-finite check.
	maxSeries = 256
	// windowSize is how many recent observations Window returns for a Judge.
	windowSize = 32
	// maxParsed bounds the samples parsed from one line (a table row has at most 32).
	maxParsed = 2 * maxColumns
	// maxFiles bounds the followed files read with their own table state.
	maxFiles = 16
)

// finding is one detector's report.
type finding struct {
	state      protocol.VerdictState
	message    string
	evidence   string
	severity   float64
	role       string // the series' role and why (Verdict.Role)
	correction string // the documented fix (Verdict.Correction)
}

// slot is one detector's current state within the Monitor.
type slot struct {
	state      protocol.VerdictState
	message    string
	severity   float64
	evidence   []string
	role       string
	correction string
}

// Monitor judges the observation stream of one operation. It is pure (no I/O, no clock of
// its own: every time comes from an Observation or from Tick) and not safe for concurrent
// use: feed it from the one goroutine that reads the operation's stream.
type Monitor struct {
	th          Thresholds
	constraints []*Constraint
	byName      map[string][]*Constraint // watched series name → its constraints

	series map[seriesKey]*series

	prof profile
	rd   reader // the code's reader (prof.code); nil for the common profiles
	ctx  runContext
	// rowNames: the names of the values the code prints as bare rows (see rowNames).
	rowNames [][]string
	// chainReported: the Markov-chain rule has spoken (chainStuck)
	chainReported bool
	qeIn          qeInput
	lmp           lammps
	out           stream             // stdout
	errs          stream             // stderr: fault signatures only
	files         map[string]*stream // followed files, by path
	off           [numDetectors]bool

	// The samples parsed from the line being observed (Parsed), and its time.
	parsed  [maxParsed]protocol.Sample
	parsedT [maxParsed]float64
	np      int
	now     time.Time
	row     tableRow

	lang  language
	nf    nonFinite
	div   divergence
	qty   quantity
	ctl   control
	osc   oscillation
	stag  stagnation
	res   resources
	slots [numDetectors]slot
	dirty bool // a slot changed since the last resolve

	cur      detector              // the detector of the current verdict; -1 when Normal
	reported protocol.VerdictState // the state of the current verdict
	latched  *protocol.Verdict     // the Error verdict, once there is one

	window [windowSize]*protocol.Observation
	wn     int // observations seen
}

// ErrConfig reports an unusable Config.
var ErrConfig = errors.New("perception: bad config")

// New returns the Monitor for one operation. It fails when a Watch expression is malformed
// (every malformed one is reported; each error wraps ErrBadConstraint).
func New(cfg *Config) (*Monitor, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	if cfg.Expect.Silence < 0 {
		return nil, fmt.Errorf("%w: negative expected silence %v", ErrConfig, cfg.Expect.Silence)
	}
	th := cfg.Thresholds.withDefaults(cfg.Expect)
	prof, err := newProfile(cfg.Profile)
	if err != nil {
		return nil, err
	}
	m := &Monitor{
		th:     th,
		prof:   prof,
		out:    stream{src: protocol.FromStdout},
		errs:   stream{src: protocol.FromStdout},
		byName: make(map[string][]*Constraint),
		series: make(map[seriesKey]*series),
		div:    divergence{window: th.DivergenceWindow, bound: th.DivergenceBound},
		qty:    quantity{stall: th.ResidualStall, drift: th.DriftTolerance, deviation: th.SetpointDeviation, rows: th.SetpointRows},
		ctx:    readContext(cfg.Code),
		qeIn:   readQEInput(cfg.Code),
		osc:    oscillation{growth: th.SwingGrowth, swings: th.GrowingSwings},
		stag: stagnation{
			batch:     cfg.Expect.Batch,
			warnAfter: th.Silence, errAfter: th.SilenceError, cadence: th.Cadence,
			frozen: th.Frozen, frozenFor: th.FrozenFor,
			learn: cfg.Expect.Silence == 0 && cfg.Thresholds.Silence == 0 && cfg.Thresholds.SilenceError == 0,
			floor: cadenceFloor,
		},
		res: resources{memWarn: th.MemoryWarning, memErr: th.MemoryError, outWarn: th.OutputWarning, memLimit: th.MemoryLimit},
		cur: -1,
	}
	var errs []error
	for _, name := range cfg.Thresholds.Off {
		i := slices.Index(detectorNames[:], name)
		switch {
		case i < 0:
			errs = append(errs, fmt.Errorf("%w: unknown detector %q in Off: the detectors are %s", ErrConfig, name, strings.Join(detectorNames[:], ", ")))
		case detector(i) == detConstraint:
			errs = append(errs, fmt.Errorf("%w: the constraint detector cannot be turned off", ErrConfig))
		default:
			m.off[i] = true
		}
	}
	if names := rowNames(cfg.Code); names != nil {
		m.rowNames = names
		m.out.table.named, m.errs.table.named = names, names
	}
	if prof.qe || prof.lammps {
		m.stag.floor = cadenceFloorCode
	} else {
		m.stag.spin = m.ctx.openLoop
	}
	if c := prof.code; c != nil && c.reader != nil {
		m.rd = c.reader(m, cfg)
	}
	for _, expr := range cfg.Watch {
		c, err := ParseConstraint(expr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m.constraints = append(m.constraints, &c)
		m.byName[c.Name] = append(m.byName[c.Name], &c)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return m, nil
}

// Constraints returns the parsed Watch constraints.
func (m *Monitor) Constraints() []Constraint {
	out := make([]Constraint, len(m.constraints))
	for i, c := range m.constraints {
		out[i] = *c
	}
	return out
}

// Observe judges one observation. It returns a verdict only when the overall verdict changes
// (its state or its detector), never per line; nil otherwise. Once the verdict is Error it
// stays Error (latched) and Observe returns nil, though later evidence from the same detector
// still reaches Verdict.
func (m *Monitor) Observe(o *protocol.Observation) *protocol.Verdict {
	if o == nil {
		return nil
	}
	m.window[m.wn%windowSize] = o
	m.wn++
	m.np, m.now = 0, o.Time
	switch o.Kind {
	case protocol.ObsStdout, protocol.ObsStderr, protocol.ObsFile:
		m.stag.activity(o.Time, m)
		if strings.IndexByte(o.Line, '\r') >= 0 {
			return m.redrawn(o)
		}
		m.text(o)
		if o.Line != "" {
			// Pairs are read on stderr too: Python's logging, tqdm's postfix and many
			// codes' progress go there.
			return m.linePairs(o)
		}
	case protocol.ObsTelemetry:
		m.stag.activity(o.Time, m)
		if o.Sample != nil {
			m.sample(o.Time, o.Sample)
		}
	case protocol.ObsResource:
		if o.Resource != nil {
			m.set(detResources, m.res.sample(o.Resource))
			m.stag.resource(o.Time, o.Resource.CPUSeconds, o.Resource.RSSBytes, o.Resource.Runnable, o.Resource.Loop, m)
			m.stag.silence(o.Time, m)
		}
	case protocol.ObsEvent:
		if o.Event != nil {
			m.stag.event(o.Time, o.Event.Name, m)
		}
	}
	return m.resolve()
}

// Parsed returns the telemetry samples the profile read from the last observed line: table
// rows, a code's progress lines (Quantum ESPRESSO's SCF, …), then the line's `name = value`
// and prose pairs (ParseSamples). They were judged with the line; the caller streams them as
// telemetry. Perception is the one reader of printed text: kernels and schedulers send lines,
// and only their helpers' structured samples (labmate_log) as telemetry. The slice and its
// samples are valid until the next Observe.
func (m *Monitor) Parsed() []protocol.Sample { return m.parsed[:m.np] }

// linePairs reads the `name = value` and prose pairs of a stdout or followed-file line after the
// profile read it, and judges each as a sample of its own, in order, as if it followed the
// line: the verdict returned is the last change, the line's own when the pairs change nothing.
func (m *Monitor) linePairs(o *protocol.Observation) *protocol.Verdict {
	v := m.resolve()
	src := protocol.FromStdout
	if o.Kind == protocol.ObsFile {
		src = protocol.FromFile
	}
	start := m.np
	t, ok := readPairs(o.Line, func(name string, v float64) { m.keep(name, v, src, nil) })
	for i := start; i < m.np; i++ {
		s := &m.parsed[i]
		if ok {
			m.parsedT[i] = t
			s.T = &m.parsedT[i]
		}
		m.stag.activity(o.Time, m)
		m.sample(o.Time, s)
		if w := m.resolve(); w != nil {
			v = w
		}
	}
	return v
}

// redrawn judges a line that a progress bar redrew with carriage returns (tqdm's
// `\r 45%|████▌     | 45/100 [00:02<00:03, 15.2it/s, loss=0.123]`, each redraw after a
// '\r'): every redraw is a line of its own, read in order, so that its postfix becomes
// samples. It returns the last change of verdict.
func (m *Monitor) redrawn(o *protocol.Observation) *protocol.Verdict {
	var v *protocol.Verdict
	rest := o.Line
	for rest != "" {
		seg := rest
		if i := strings.IndexByte(rest, '\r'); i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if strings.TrimSpace(seg) == "" {
			continue
		}
		part := *o
		part.Line = seg
		m.text(&part)
		if w := m.linePairs(&part); w != nil {
			v = w
		}
	}
	if w := m.resolve(); w != nil {
		v = w
	}
	return v
}

// text judges one line of stdout, stderr or a followed file.
func (m *Monitor) text(o *protocol.Observation) {
	if o.Line == "" {
		return // a followed file grew without a complete line: activity only
	}
	st := m.streamFor(o)
	row := false
	if o.Kind != protocol.ObsStderr && st.table.line(o.Line, m.prof.lammps, &m.row) {
		row = true
		m.emitRow(st)
	}
	if m.rd != nil {
		m.rd.line(m, st, o.Kind, o.Line)
	}
	if f, ok := m.lang.line(o.Kind, o.Line); ok {
		m.raise(detLanguage, f)
	}
	if !row {
		if f, ok := m.nf.line(o.Time, o.Kind, o.Line, true); ok { // pairs are samples on every stream
			m.raise(detNonFinite, f)
		}
	}
}

// streamFor is the reading state of o's stream.
func (m *Monitor) streamFor(o *protocol.Observation) *stream {
	switch o.Kind {
	case protocol.ObsStderr:
		return &m.errs
	case protocol.ObsFile:
		if st := m.files[o.Path]; st != nil {
			return st
		}
		if m.files == nil {
			m.files = make(map[string]*stream)
		}
		if len(m.files) >= maxFiles {
			return &m.errs // further files: fault signatures only, no table state of their own
		}
		st := &stream{src: protocol.FromFile}
		st.table.named = m.rowNames
		m.files[o.Path] = st
		return st
	}
	return &m.out
}

// emitRow turns the table row just read into samples.
func (m *Monitor) emitRow(st *stream) {
	tb, r := &st.table, &m.row
	var t *float64
	if tb.tcol >= 0 {
		t = &r.values[tb.tcol]
	}
	for j := range r.n {
		if j != tb.tcol {
			m.emitT(st, tb.names[j], r.values[j], t)
		}
	}
}

// emit judges one sample the profile parsed and keeps it for Parsed.
func (m *Monitor) emit(st *stream, name string, v float64) { m.emitT(st, name, v, nil) }

func (m *Monitor) emitT(st *stream, name string, v float64, t *float64) {
	if s := m.keep(name, v, st.src, t); s != nil {
		m.sample(m.now, s)
	}
}

// keep adds a sample to Parsed; nil past maxParsed.
func (m *Monitor) keep(name string, v float64, src protocol.SampleSource, t *float64) *protocol.Sample {
	if m.np == maxParsed {
		return nil
	}
	s := &m.parsed[m.np]
	*s = protocol.Sample{Name: name, Value: v, Source: src}
	if t != nil {
		m.parsedT[m.np] = *t
		s.T = &m.parsedT[m.np]
	}
	m.np++
	return s
}

// Tick runs the time-based detectors (a silent but busy process) at now, when no observation
// arrived. Like Observe it returns a verdict only on change.
func (m *Monitor) Tick(now time.Time) *protocol.Verdict {
	m.stag.silence(now, m)
	return m.resolve()
}

// End is called when the stream has ended: a watch constraint whose series never appeared
// (a misspelt name, a value the code never printed or logged) could not be checked, which is
// a Warning naming it. It returns the verdict when that changes it, like Observe.
func (m *Monitor) End() *protocol.Verdict {
	for _, c := range m.constraints {
		if !m.seen(c.Name) {
			m.raise(detConstraint, finding{
				state:    protocol.Warning,
				message:  fmt.Sprintf("watch %q was never checked: no value of %s appeared (print %s = …, or log it as telemetry)", c.Expr, c.Name, c.Name),
				evidence: fmt.Sprintf("watch %q: no sample named %s", c.Expr, c.Name),
				severity: 0.5,
			})
		}
	}
	return m.resolve()
}

// seen says whether a series of that name appeared, from any source.
func (m *Monitor) seen(name string) bool {
	for k := range m.series {
		if k.name == name {
			return true
		}
	}
	return false
}

// Verdict is the current overall verdict: the worst state any detector reports.
func (m *Monitor) Verdict() protocol.Verdict {
	if m.latched != nil {
		v := *m.latched
		v.Evidence = append([]string(nil), v.Evidence...)
		return v
	}
	if m.cur < 0 {
		return normalVerdict()
	}
	return m.build(m.cur)
}

// Window returns the most recent observations (at most 32), oldest first: the context a
// Judge gets for an ambiguous verdict.
func (m *Monitor) Window() []*protocol.Observation {
	n := min(m.wn, windowSize)
	out := make([]*protocol.Observation, 0, n)
	for i := m.wn - n; i < m.wn; i++ {
		out = append(out, m.window[i%windowSize])
	}
	return out
}

// sample routes one telemetry sample through the numeric detectors.
func (m *Monitor) sample(t time.Time, s *protocol.Sample) {
	sr := m.lookup(s)
	if sr == nil {
		return
	}
	v, norm, finite := sampleValues(s)
	if f, ok := m.nf.sample(t, sr, s, finite); ok {
		m.raise(detNonFinite, m.corrected(sr, detNonFinite, f))
	}
	for i := range sr.cons {
		if f, ok := sr.cons[i].check(s, norm); ok {
			m.raise(detConstraint, f)
		}
	}
	if f, ok := m.stag.sample(t, sr, s); ok {
		m.raise(detStagnation, f)
	}
	if m.ctx.sampler && len(s.Values) == 0 {
		m.chainStuck(sr, s)
	}
	if !finite {
		return // the non-finite detector has spoken; NaN would poison the numeric state
	}
	if !sr.bounded { // a declared bound replaces the divergence detector
		if f, ok := m.div.sample(sr, norm); ok {
			m.raise(detDivergence, m.corrected(sr, detDivergence, f))
		}
	}
	if sr.role.role != RoleUnknown && len(s.Values) == 0 {
		m.judgeRole(t, sr, s.Value)
	}
	if (sr.setpoint || sr.process || m.ctl.stem != "") && len(s.Values) == 0 && s.Source != protocol.FromHelper {
		m.controlSample(t, sr, s.Value)
	}
	if f, ok := m.osc.sample(sr, v); ok {
		m.raise(detOscillation, f)
	}
	if sr.isStep {
		m.crawl(t, sr, s)
	}
	if m.rd != nil {
		m.rd.sample(m, sr, s)
	}
}

// lookup finds or creates the state of the sample's series; nil past maxSeries.
func (m *Monitor) lookup(s *protocol.Sample) *series {
	k := seriesKey{s.Name, s.Source}
	if sr := m.series[k]; sr != nil {
		return sr
	}
	cons := m.byName[s.Name]
	if len(m.series) >= maxSeries && len(cons) == 0 {
		return nil
	}
	sr := newSeries(s.Name, s.Source, cons)
	sr.role = m.roleFor(s.Name, cons)
	m.series[k] = sr
	return sr
}

// raise reports a sticky finding: a detector's state only rises. A finding of the slot's
// current state adds its evidence.
func (m *Monitor) raise(d detector, f finding) {
	if m.off[d] {
		return
	}
	sl := &m.slots[d]
	switch r, cur := rank(f.state), rank(sl.state); {
	case r > cur:
		sl.state, sl.message, sl.severity = f.state, f.message, f.severity
		sl.role, sl.correction = f.role, f.correction
		sl.evidence = append(sl.evidence[:0], truncate(f.evidence))
		m.dirty = true
	case r == cur && r > 0:
		if len(sl.evidence) < maxEvidence && f.evidence != "" {
			sl.evidence = append(sl.evidence, truncate(f.evidence))
			if m.latched != nil && m.cur == d && len(m.latched.Evidence) < maxEvidence {
				m.latched.Evidence = append(m.latched.Evidence, truncate(f.evidence))
			}
		}
	}
}

// set reports a condition: the detector's state is exactly f's, and may fall back.
func (m *Monitor) set(d detector, f finding) {
	if m.off[d] {
		return
	}
	sl := &m.slots[d]
	if f.state == sl.state && f.message == sl.message {
		return
	}
	if f.state == protocol.Normal || f.state == "" {
		if sl.state != protocol.Normal && sl.state != "" {
			*sl = slot{evidence: sl.evidence[:0]}
			m.dirty = true
		}
		return
	}
	sl.state, sl.message, sl.severity = f.state, f.message, f.severity
	sl.evidence = append(sl.evidence[:0], truncate(f.evidence))
	m.dirty = true
}

// resolve recomputes the overall verdict and returns it when it changed.
func (m *Monitor) resolve() *protocol.Verdict {
	if !m.dirty || m.latched != nil {
		return nil
	}
	m.dirty = false
	worst, det := 0, detector(-1)
	for d := range numDetectors {
		if r := rank(m.slots[d].state); r > worst {
			worst, det = r, d
		}
	}
	if m.cur >= 0 && worst > 0 && rank(m.slots[m.cur].state) == worst {
		det = m.cur // on a tie keep the detector already reported
	}
	if det == m.cur && (det < 0 || m.reported == m.slots[det].state) {
		return nil
	}
	m.cur = det
	var v protocol.Verdict
	if det < 0 {
		m.reported = protocol.Normal
		v = normalVerdict()
	} else {
		m.reported = m.slots[det].state
		v = m.build(det)
	}
	if v.State == protocol.Error {
		l := v
		l.Evidence = append([]string(nil), v.Evidence...)
		m.latched = &l
	}
	return &v
}

func (m *Monitor) build(d detector) protocol.Verdict {
	sl := &m.slots[d]
	return protocol.Verdict{
		State:      sl.state,
		Detector:   detectorNames[d],
		Message:    sl.message,
		Evidence:   append([]string(nil), sl.evidence...),
		Severity:   clampSeverity(sl.state, sl.severity),
		Action:     actionFor(sl.state),
		Role:       sl.role,
		Correction: sl.correction,
	}
}

func normalVerdict() protocol.Verdict {
	return protocol.Verdict{State: protocol.Normal, Message: "no anomaly", Action: protocol.ActionContinue}
}

// Interrupts is the Hot-Fix policy: whether verdict v should interrupt an operation run under
// policy p (p.Interrupts(v)).
func Interrupts(p protocol.Hotfix, v *protocol.Verdict) bool { return p.Interrupts(v) }

func rank(s protocol.VerdictState) int {
	switch s {
	case protocol.Warning:
		return 1
	case protocol.Error:
		return 2
	}
	return 0
}

func actionFor(s protocol.VerdictState) protocol.Action {
	switch s {
	case protocol.Error:
		return protocol.ActionInterrupt
	case protocol.Warning:
		return protocol.ActionAnnotate
	}
	return protocol.ActionContinue
}

// clampSeverity keeps a detector's severity inside its state's band: Normal 0, Warning
// [0.3, 0.6], Error [0.7, 1]. A zero severity takes the band's middle.
func clampSeverity(s protocol.VerdictState, v float64) float64 {
	var lo, mid, hi float64
	switch s {
	case protocol.Warning:
		lo, mid, hi = 0.3, 0.45, 0.6
	case protocol.Error:
		lo, mid, hi = 0.7, 0.85, 1
	default:
		return 0
	}
	if v == 0 {
		return mid
	}
	return min(max(v, lo), hi)
}

// truncate bounds one evidence item, cutting at a UTF-8 boundary.
func truncate(s string) string {
	if len(s) <= maxEvidenceLen {
		return s
	}
	i := maxEvidenceLen - len("…")
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
