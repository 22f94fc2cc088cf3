package runner

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/campaignlog"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/lab/game"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// CampaignSpec asks for a campaign on a fully mapped dataset: see game.Spec.
type CampaignSpec = game.Spec

// Campaigns sets campaigns up from their specs (Config.Campaigns): Datasets over CSV files,
// or a test's own instrument and planner.
type Campaigns interface {
	// Setup makes the campaign spec asks for ready to play, or says what is wrong with spec.
	Setup(ctx context.Context, spec *CampaignSpec) (*CampaignSetup, error)
}

// Datasets are Campaigns on fully mapped datasets (game.NewSetup): a CSV uploaded with the
// spec, or a file under Roots (labmate serve --data-root).
type Datasets struct{ Roots *dataset.Roots }

// Setup is game.NewSetup of spec over d's roots.
func (d Datasets) Setup(_ context.Context, spec *CampaignSpec) (*CampaignSetup, error) {
	g, err := game.NewSetup(d.Roots, spec)
	if err != nil {
		return nil, err
	}
	return &CampaignSetup{Instrument: g.Instrument, Planner: g.Planner, Campaign: g.Campaign, Scale: g.Group.Scale}, nil
}

// CampaignSetup is a campaign ready to play: made by Config.Campaigns from a spec.
type CampaignSetup struct {
	Instrument lab.Instrument
	Planner    lab.Planner
	Campaign   *lab.Campaign // ID, Budget and the description; ID is assigned when empty
	Scale      lab.Scale     // the group's mean and maximum, for normalized advantage and NMA
}

// Each campaign is a stream in the protocol log, like an agent run (runs.go): its own session,
// named by the campaign's id, in which the id is the operation id of
//
//	run_event {"kind": "campaign", "type": "start", "campaign": lab.Campaign, "scale": lab.Scale}
//	run_event {"kind": "campaign", "type": "step", "step": lab.Step, "advantage": A, "nma": N}  (one per turn, as it is played)
//	run_end   {"reason": R, "error": why}
//
// (CampaignEvent; R is one of the CampaignEnd reasons). Clients follow a campaign on its
// session's WebSocket or GET /v1/sessions/ID/messages; GET /v1/campaigns and
// /v1/campaigns/ID read campaigns from the log, so that they outlive the server. The server
// keeps in memory only the campaigns it is playing (their dataset group and planner); the log
// is also what memory-informed planners learn from (campaignlog.Steps).

// CampaignEvent is the payload of a campaign's run_event: its start (CampaignStart) or one
// turn (CampaignStep), as labmate campaign run logs it too.
type CampaignEvent = campaignlog.Event

// The types of a CampaignEvent.
const (
	CampaignStart = campaignlog.Start
	CampaignStep  = campaignlog.Step
)

// How a campaign ended: the reason of its run_end. A campaign is never resumable: its
// planner's state lives in memory only, so one stopped by the server cannot be continued.
const (
	// CampaignEndBudget: every turn of the budget was played.
	CampaignEndBudget = campaignlog.EndBudget
	// CampaignEndExhausted: the planner had nothing left to try before the budget was spent.
	CampaignEndExhausted = campaignlog.EndExhausted
	// CampaignEndError (protocol.ReasonError): the planner or a store failed; the error says how.
	CampaignEndError = campaignlog.EndError
	// CampaignEndIdle: stopped after campaignIdle without a turn, to make room for a new campaign.
	CampaignEndIdle protocol.Reason = "idle"
	// CampaignEndShutdown: the server shut down (Close) before the campaign finished.
	CampaignEndShutdown protocol.Reason = "server_shutdown"
	// CampaignEndRestart (protocol.ReasonServerRestart): the server stopped (a crash) while the
	// campaign was unfinished; the next server's Store.Recover closed it.
	CampaignEndRestart = protocol.ReasonServerRestart
)

// CampaignStatus is a campaign and how far it got. Curves hold one value per turn played
// (null before the first measurement, or for a turn without one).
type CampaignStatus struct {
	Campaign  *lab.Campaign   `json:"campaign"`
	Steps     []lab.Step      `json:"steps"`
	Advantage []*float64      `json:"advantage" jsonschema:"normalized advantage of each turn's measurement"`
	NMA       []*float64      `json:"nma" jsonschema:"normalized advantage of the best measurement so far, per turn"`
	Best      *lab.Step       `json:"best,omitempty"`
	Scale     lab.Scale       `json:"scale"`
	Done      bool            `json:"done" jsonschema:"the campaign has ended: see reason"`
	Reason    protocol.Reason `json:"reason,omitempty" jsonschema:"how it ended: budget_spent, exhausted, interrupted, error, idle, server_shutdown or server_restart"`
	Error     string          `json:"error,omitempty" jsonschema:"why the campaign stopped early"`
	// PlayedBy names the process that plays an unfinished campaign when it is another labmate
	// process (labmate campaign run): it is interrupted there, through the log (elsewhere.go).
	PlayedBy string `json:"played_by,omitempty" jsonschema:"the labmate process that plays the unfinished campaign, when another process does (labmate campaign run): an operation_interrupt of its stream stops it there"`
}

// campaign is one campaign being played, a turn at a time, through iter.Pull2 over lab.Run.
type campaign struct {
	mu     sync.Mutex // one turn at a time
	id     string
	budget int
	scale  lab.Scale
	next   func() (*lab.Step, error, bool)
	stop   func()
	steps  []lab.Step // for the curves of the next turn's event
	done   bool
	last   time.Time // of the start or the last turn
}

// campaigns are the campaigns the server is playing, by id.
type campaigns struct {
	mu      sync.Mutex
	byID    map[string]*campaign
	setting chan struct{} // a slot per campaign being set up (maxSettingUp)
}

// The server's campaigns are bounded: a live one holds its dataset group and its planner
// (up to tens of MB at the dataset limits); a finished one is only in the log.
const (
	// maxSettingUp campaigns are read and set up at a time; more wait.
	maxSettingUp = 2
	// MaxLiveCampaigns campaigns may be unfinished at once; one idle for campaignIdle is stopped to
	// make room for a new one.
	MaxLiveCampaigns = 16
	campaignIdle     = 30 * time.Minute
	// maxKept campaigns, the newest, are listed by Campaigns (all stay in the log).
	maxKept = 200
	// MaxBudget bounds a campaign's turns (and so what GET /v1/campaigns lists: at most
	// maxKept × MaxBudget turns).
	MaxBudget = 1000
)

// ErrTooManyCampaigns is returned when MaxLiveCampaigns campaigns are unfinished and none is idle.
var ErrTooManyCampaigns = errors.New("server: too many campaigns in progress")

// MaxCampaignBody bounds POST /v1/campaigns: an upload of the largest CSV the dataset limits
// allow, JSON-escaped (at worst twice its size), and the rest of the spec.
var MaxCampaignBody = 2*dataset.DefaultLimits.Bytes + 64<<10

// MaxCSVBytes is the most bytes a campaign's dataset may have (the dataset limits).
var MaxCSVBytes = dataset.DefaultLimits.Bytes

// ErrNoCampaigns is returned when the server was configured without Config.Campaigns.
var ErrNoCampaigns = errors.New("server: this server runs no campaigns")

// ErrUnknownCampaign is returned for a campaign id the server does not know.
var ErrUnknownCampaign = errors.New("server: unknown campaign")

// StartCampaign sets a campaign up from spec (Config.Campaigns), logs its start and returns
// its status before the first turn. What spec leaves out takes game's defaults
// (Spec.SetDefaults), those of labmate campaign run.
func (s *Runner) StartCampaign(ctx context.Context, spec *CampaignSpec) (*CampaignStatus, error) {
	if s.cfg.Campaigns == nil {
		return nil, ErrNoCampaigns
	}
	sp := *spec
	spec = &sp
	spec.SetDefaults(0) // the budget's default waits for the space's size
	if spec.Budget < 0 || spec.Budget > MaxBudget {
		return nil, fmt.Errorf("budget %d: want 1 to %d turns", spec.Budget, MaxBudget)
	}
	if n, max := len(spec.CSVData), dataset.DefaultLimits.Bytes; int64(n) > max {
		return nil, fmt.Errorf("campaign: csv_data has %d bytes; at most %d are allowed", n, max)
	}
	// One of maxSettingUp slots, held until the campaign is listed: a burst of large uploads is
	// read a few at a time, and the count of unfinished campaigns stays true.
	release, err := s.settingUp(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := s.roomForCampaign(); err != nil {
		return nil, err
	}
	setup, err := s.cfg.Campaigns.Setup(ctx, spec)
	if err != nil {
		return nil, err
	}
	n := setup.Instrument.Space().Size()
	spec.SetDefaults(n)
	if spec.Budget <= 0 || spec.Budget > n {
		return nil, fmt.Errorf("campaign: budget %d: the space has only %d conditions", spec.Budget, n)
	}
	c := setup.Campaign
	if c.ID == "" {
		c.ID = "c-" + uuid.NewString()
	}
	c.Budget = spec.Budget
	if c.Started.IsZero() {
		c.Started = time.Now()
	}
	// The campaign's session is its own: one that exists already (an earlier campaign, a
	// session of operations) is not mixed into.
	if _, err := s.store.Operations(ctx, c.ID); !errors.Is(err, protocol.ErrUnknownSession) {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("campaign %s: already exists", c.ID)
	}
	// The campaign lives as long as the server: its turns are played on later calls, each
	// logged as it is played (play), where later campaigns' priors read it (campaignlog.Steps).
	next, stop := iter.Pull2(lab.Run(s.ctx, setup.Instrument, setup.Planner, c, nil))
	cp := &campaign{id: c.ID, budget: c.Budget, scale: setup.Scale, next: next, stop: stop, last: time.Now()}
	s.camps.mu.Lock()
	if s.camps.byID[c.ID] != nil {
		s.camps.mu.Unlock()
		stop()
		return nil, fmt.Errorf("campaign %s: already exists", c.ID)
	}
	s.camps.byID[c.ID] = cp
	s.camps.mu.Unlock()
	scale := setup.Scale
	if err := s.appendCampaign(c.ID, protocol.TypeRunEvent, &CampaignEvent{Kind: protocol.KindCampaign, Type: CampaignStart, Campaign: c, Scale: &scale}); err != nil {
		cp.mu.Lock()
		cp.stop()
		cp.done = true
		cp.mu.Unlock()
		s.forget(cp)
		return nil, fmt.Errorf("campaign %s: logging its start: %w", c.ID, err)
	}
	return s.CampaignState(context.WithoutCancel(ctx), c.ID)
}

// appendCampaign logs a message of campaign id in its session, through the live session when
// there is room for one, so that its followers see it at once. The log is written whatever
// the caller's context says.
func (s *Runner) appendCampaign(id string, t protocol.Type, payload any) error {
	m, err := protocol.NewMessage(t, id, id, payload)
	if err != nil {
		return err
	}
	ctx := context.Background()
	ss, err := s.Open(id)
	if err != nil { // no room for another live session: nobody follows this one live
		_, err = s.store.Append(ctx, m)
		return err
	}
	defer s.Release(ss)
	_, err = ss.Append(ctx, m)
	return err
}

// settingUp waits for one of maxSettingUp slots to set a campaign up in; release frees it.
func (s *Runner) settingUp(ctx context.Context) (release func(), err error) {
	select {
	case s.camps.setting <- struct{}{}:
		return func() { <-s.camps.setting }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// liveCampaigns returns the campaigns being played.
func (s *Runner) liveCampaigns() []*campaign {
	s.camps.mu.Lock()
	defer s.camps.mu.Unlock()
	return slices.Collect(maps.Values(s.camps.byID))
}

// roomForCampaign stops the campaigns idle for campaignIdle and returns ErrTooManyCampaigns
// if MaxLiveCampaigns are still unfinished.
func (s *Runner) roomForCampaign() error {
	live := 0
	for _, cp := range s.liveCampaigns() {
		if !cp.mu.TryLock() { // playing a turn: live, and not idle
			live++
			continue
		}
		if !cp.done && time.Since(cp.last) > campaignIdle {
			s.endCampaign(cp, CampaignEndIdle, fmt.Sprintf("stopped after %v without a turn, to make room for a new campaign", campaignIdle))
		}
		if !cp.done {
			live++
		}
		cp.mu.Unlock()
	}
	if live >= MaxLiveCampaigns {
		return fmt.Errorf("%w: %d are unfinished (at most %d; one idle for %v is stopped to make room)", ErrTooManyCampaigns, live, MaxLiveCampaigns, campaignIdle)
	}
	return nil
}

// endCampaign ends the campaign: it lets go of its instrument and planner, logs its run_end
// and leaves the server's memory; cp.mu is held.
func (s *Runner) endCampaign(cp *campaign, reason protocol.Reason, why string) {
	if cp.done {
		return
	}
	cp.stop()
	cp.next, cp.stop, cp.steps = nil, nil, nil
	cp.done = true
	if err := s.appendCampaign(cp.id, protocol.TypeRunEnd, &protocol.RunEnd{Reason: reason, Error: why}); err != nil {
		s.Logf("campaign %s: logging its end (%s): %v", cp.id, reason, err)
	}
	s.forget(cp)
}

func (s *Runner) forget(cp *campaign) {
	s.camps.mu.Lock()
	if s.camps.byID[cp.id] == cp {
		delete(s.camps.byID, cp.id)
	}
	s.camps.mu.Unlock()
}

// live returns campaign id when the server is playing it, or nil.
func (s *Runner) live(id string) *campaign {
	s.camps.mu.Lock()
	defer s.camps.mu.Unlock()
	return s.camps.byID[id]
}

// StepCampaign plays up to n more turns (fewer when the campaign ends), each logged as it is
// played, and returns its status. An ended campaign's status is returned as it is.
func (s *Runner) StepCampaign(ctx context.Context, id string, n int) (*CampaignStatus, error) {
	cp := s.live(id)
	if cp == nil {
		if _, err := s.CampaignState(ctx, id); err != nil {
			return nil, err
		}
	}
	if n <= 0 {
		return nil, fmt.Errorf("steps %d: want at least 1", n)
	}
	if cp != nil {
		s.play(ctx, cp, n)
	}
	st, err := s.CampaignState(context.WithoutCancel(ctx), id)
	if err != nil {
		return nil, err
	}
	return st, ctx.Err()
}

// play plays up to n turns of cp.
func (s *Runner) play(ctx context.Context, cp *campaign, n int) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for range n {
		if cp.done || ctx.Err() != nil {
			return
		}
		st, err, ok := cp.next()
		cp.last = time.Now()
		switch {
		case !ok: // the turns of the budget end with the last one, below
			s.endCampaign(cp, CampaignEndExhausted, "")
		case err != nil && s.ctx.Err() != nil:
			s.endCampaign(cp, CampaignEndShutdown, "the server shut down during turn "+strconv.Itoa(len(cp.steps)+1)+"; "+cannotContinue)
		case err != nil:
			s.endCampaign(cp, CampaignEndError, err.Error())
		default:
			cp.steps = append(cp.steps, *st)
			curves := lab.Score(cp.steps, cp.scale, len(cp.steps))
			i := len(cp.steps) - 1
			ev := &CampaignEvent{Kind: protocol.KindCampaign, Type: CampaignStep, Step: st,
				Advantage: finite(curves.Advantage[i]), NMA: finite(curves.NMA[i])}
			if err := s.appendCampaign(cp.id, protocol.TypeRunEvent, ev); err != nil {
				s.endCampaign(cp, CampaignEndError, fmt.Sprintf("logging turn %d: %v", st.N, err))
				continue
			}
			if len(cp.steps) >= cp.budget {
				s.endCampaign(cp, CampaignEndBudget, "")
			}
		}
	}
}

// cannotContinue ends the error of a campaign the server stopped.
const cannotContinue = "a campaign cannot be continued (its planner's state was in memory): start a new one"

// CampaignState returns a campaign's status, read from the log.
func (s *Runner) CampaignState(ctx context.Context, id string) (*CampaignStatus, error) {
	unknown := fmt.Errorf("%w %q", ErrUnknownCampaign, id)
	var st *CampaignStatus
	for m, err := range s.store.Operation(ctx, id, id) {
		if errors.Is(err, protocol.ErrUnknownSession) || errors.Is(err, protocol.ErrUnknownOperation) {
			return nil, unknown
		}
		if err != nil {
			return nil, fmt.Errorf("campaign %s: reading its log: %w", id, err)
		}
		switch m.Type {
		case protocol.TypeRunEvent:
			var ev CampaignEvent
			if err := m.Decode(&ev); err != nil || ev.Kind != protocol.KindCampaign {
				return nil, unknown // an agent run
			}
			switch {
			case ev.Type == CampaignStart && ev.Campaign != nil && st == nil:
				st = &CampaignStatus{Campaign: ev.Campaign, Steps: []lab.Step{}}
				if ev.Scale != nil {
					st.Scale = *ev.Scale
				}
			case ev.Type == CampaignStep && ev.Step != nil && st != nil:
				st.Steps = append(st.Steps, *ev.Step)
			}
		case protocol.TypeRunEnd:
			var e protocol.RunEnd
			if st == nil || m.Decode(&e) != nil {
				return nil, unknown
			}
			st.Done, st.Reason, st.Error = true, e.Reason, e.Error
			if e.Reason == CampaignEndRestart {
				st.Error = "the server stopped while the campaign was unfinished; " + cannotContinue
			}
		}
	}
	if st == nil {
		return nil, unknown
	}
	if sq, ok := s.store.(*sqlite.Store); ok && !st.Done {
		if w, found := sq.Writer(ctx, id, id); found && w.Live && !w.Self {
			st.PlayedBy = fmt.Sprintf("labmate %s (pid %d)", w.Role, w.Pid)
		}
	}
	st.Advantage, st.NMA = []*float64{}, []*float64{}
	curves := lab.Score(st.Steps, st.Scale, len(st.Steps))
	for i := range st.Steps {
		st.Advantage = append(st.Advantage, finite(curves.Advantage[i]))
		st.NMA = append(st.NMA, finite(curves.NMA[i]))
		if st.Steps[i].OK && (st.Best == nil || st.Steps[i].Value > st.Best.Value) {
			b := st.Steps[i]
			st.Best = &b
		}
	}
	return st, nil
}

// Campaigns lists the newest maxKept campaigns in the log, oldest first.
func (s *Runner) Campaigns(ctx context.Context) ([]*CampaignStatus, error) {
	sessions, err := s.store.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for i := len(sessions) - 1; i >= 0 && len(ids) < maxKept; i-- {
		id := sessions[i].ID
		ops, err := s.store.Operations(ctx, id)
		if err != nil {
			return nil, err
		}
		if len(ops) > 0 && ops[0].ID == id && ops[0].Kind == protocol.KindCampaign {
			ids = append(ids, id)
		}
	}
	slices.Reverse(ids)
	out := make([]*CampaignStatus, 0, len(ids))
	for _, id := range ids {
		st, err := s.CampaignState(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// closeCampaigns ends every campaign being played (the server is closing).
func (s *Runner) closeCampaigns() {
	for _, cp := range s.liveCampaigns() {
		cp.mu.Lock()
		s.endCampaign(cp, CampaignEndShutdown, "the server shut down before the campaign finished; "+cannotContinue)
		cp.mu.Unlock()
	}
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// RunsCampaigns reports whether the server was configured with Config.Campaigns.
func (s *Runner) RunsCampaigns() bool { return s.cfg.Campaigns != nil }
