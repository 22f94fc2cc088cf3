package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/lab/game"
)

// CampaignSpec asks for a campaign on a fully mapped dataset: see game.Spec.
type CampaignSpec = game.Spec

// CampaignSetup is a campaign ready to play: made by Config.Campaign from a spec.
type CampaignSetup struct {
	Instrument lab.Instrument
	Planner    lab.Planner
	Campaign   *lab.Campaign // ID, Budget and the description; ID is assigned when empty
	Scale      lab.Scale     // the group's mean and maximum, for normalized advantage and NMA
}

// CampaignStatus is a campaign and how far it got. Curves hold one value per turn played
// (null before the first measurement, or for a turn without one).
type CampaignStatus struct {
	Campaign  *lab.Campaign `json:"campaign"`
	Steps     []lab.Step    `json:"steps"`
	Advantage []*float64    `json:"advantage" jsonschema:"normalized advantage of each turn's measurement"`
	NMA       []*float64    `json:"nma" jsonschema:"normalized advantage of the best measurement so far, per turn"`
	Best      *lab.Step     `json:"best,omitempty"`
	Scale     lab.Scale     `json:"scale"`
	Done      bool          `json:"done" jsonschema:"the budget is spent or the planner has nothing left to try"`
	Error     string        `json:"error,omitempty" jsonschema:"why the campaign stopped early"`
}

// campaign is one campaign being played, a turn at a time, through iter.Pull2 over lab.Run.
type campaign struct {
	mu    sync.Mutex // one turn at a time
	setup *CampaignSetup
	next  func() (*lab.Step, error, bool)
	stop  func()
	steps []lab.Step
	done  bool
	err   string
	last  time.Time // of the start or the last turn
}

// campaigns are the server's campaigns by id, in the order they were started.
type campaigns struct {
	mu      sync.Mutex
	byID    map[string]*campaign
	order   []string
	setting chan struct{} // a slot per campaign being set up (maxSettingUp)
}

// The server's campaigns are bounded: a live one holds its dataset group and its planner
// (up to tens of MB at the dataset limits), a finished one only its turns.
const (
	// maxSettingUp campaigns are read and set up at a time; more wait.
	maxSettingUp = 2
	// maxLive campaigns may be unfinished at once; one idle for campaignIdle is stopped to
	// make room for a new one.
	maxLive      = 16
	campaignIdle = 30 * time.Minute
	// maxKept campaigns are listed; beyond, the oldest finished ones are forgotten (their
	// turns stay in the campaign store).
	maxKept = 200
	// maxBudget bounds a campaign's turns (and so what GET /v1/campaigns lists: at most
	// maxKept × maxBudget turns).
	maxBudget = 1000
)

// ErrTooManyCampaigns is returned when maxLive campaigns are unfinished and none is idle.
var ErrTooManyCampaigns = errors.New("server: too many campaigns in progress")

// maxCampaignBody bounds POST /v1/campaigns: an upload of the largest CSV the dataset limits
// allow, JSON-escaped (at worst twice its size), and the rest of the spec.
var maxCampaignBody = 2*dataset.DefaultLimits.Bytes + 64<<10

// ErrNoCampaigns is returned when the server was configured without Config.Campaign.
var ErrNoCampaigns = errors.New("server: this server runs no campaigns")

// ErrUnknownCampaign is returned for a campaign id the server does not know.
var ErrUnknownCampaign = errors.New("server: unknown campaign")

// StartCampaign sets a campaign up from spec (Config.Campaign) and returns its status before
// the first turn. Steps are recorded in Config.CampaignStore when set.
func (s *Server) StartCampaign(ctx context.Context, spec *CampaignSpec) (*CampaignStatus, error) {
	if s.cfg.Campaign == nil {
		return nil, ErrNoCampaigns
	}
	if spec.Budget <= 0 || spec.Budget > maxBudget {
		return nil, fmt.Errorf("budget %d: want 1 to %d turns", spec.Budget, maxBudget)
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
	setup, err := s.cfg.Campaign(ctx, spec)
	if err != nil {
		return nil, err
	}
	if n := setup.Instrument.Space().Size(); spec.Budget > n {
		return nil, fmt.Errorf("campaign: budget %d: the space has only %d conditions", spec.Budget, n)
	}
	c := setup.Campaign
	if c.ID == "" {
		c.ID = "c-" + uuid.NewString()
	}
	c.Budget = spec.Budget
	var store lab.Store
	if s.cfg.CampaignStore != nil {
		store = s.cfg.CampaignStore
	}
	// The campaign lives as long as the server: its turns are played on later calls.
	next, stop := iter.Pull2(lab.Run(s.ctx, setup.Instrument, setup.Planner, c, &lab.Options{Store: store}))
	cp := &campaign{setup: setup, next: next, stop: stop, last: time.Now()}
	s.camps.mu.Lock()
	defer s.camps.mu.Unlock()
	if s.camps.byID == nil {
		s.camps.byID = map[string]*campaign{}
	}
	if s.camps.byID[c.ID] != nil {
		stop()
		return nil, fmt.Errorf("campaign %s: already exists", c.ID)
	}
	s.camps.byID[c.ID] = cp
	s.camps.order = append(s.camps.order, c.ID)
	s.forgetOldCampaigns()
	return cp.status(), nil
}

// settingUp waits for one of maxSettingUp slots to set a campaign up in; release frees it.
func (s *Server) settingUp(ctx context.Context) (release func(), err error) {
	s.camps.mu.Lock()
	if s.camps.setting == nil {
		s.camps.setting = make(chan struct{}, maxSettingUp)
	}
	slots := s.camps.setting
	s.camps.mu.Unlock()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// roomForCampaign stops the campaigns idle for campaignIdle and returns ErrTooManyCampaigns
// if maxLive are still unfinished.
func (s *Server) roomForCampaign() error {
	s.camps.mu.Lock()
	all := make([]*campaign, 0, len(s.camps.byID))
	for _, cp := range s.camps.byID {
		all = append(all, cp)
	}
	s.camps.mu.Unlock()
	live := 0
	for _, cp := range all {
		if !cp.mu.TryLock() { // playing a turn: live, and not idle
			live++
			continue
		}
		if !cp.done && time.Since(cp.last) > campaignIdle {
			cp.finish(fmt.Sprintf("stopped after %v without a turn, to make room for a new campaign", campaignIdle))
		}
		if !cp.done {
			live++
		}
		cp.mu.Unlock()
	}
	if live >= maxLive {
		return fmt.Errorf("%w: %d are unfinished (at most %d; one idle for %v is stopped to make room)", ErrTooManyCampaigns, live, maxLive, campaignIdle)
	}
	return nil
}

// forgetOldCampaigns drops the oldest finished campaigns beyond maxKept; s.camps.mu is held.
func (s *Server) forgetOldCampaigns() {
	excess := len(s.camps.order) - maxKept
	if excess <= 0 {
		return
	}
	kept := s.camps.order[:0]
	for _, id := range s.camps.order {
		cp := s.camps.byID[id]
		if excess > 0 && cp.mu.TryLock() {
			done := cp.done
			cp.mu.Unlock()
			if done {
				delete(s.camps.byID, id)
				excess--
				continue
			}
		}
		kept = append(kept, id)
	}
	s.camps.order = kept
}

// finish ends the campaign (with why, when set, as its error) and lets go of its instrument
// and planner; cp.mu is held.
func (cp *campaign) finish(why string) {
	if cp.stop != nil {
		cp.stop()
	}
	cp.next, cp.stop = nil, nil
	cp.setup.Instrument, cp.setup.Planner = nil, nil
	cp.done = true
	if why != "" && cp.err == "" {
		cp.err = why
	}
}

func (s *Server) campaign(id string) (*campaign, error) {
	s.camps.mu.Lock()
	defer s.camps.mu.Unlock()
	cp := s.camps.byID[id]
	if cp == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownCampaign, id)
	}
	return cp, nil
}

// StepCampaign plays up to n more turns (fewer when the campaign ends) and returns its status.
func (s *Server) StepCampaign(ctx context.Context, id string, n int) (*CampaignStatus, error) {
	cp, err := s.campaign(id)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, fmt.Errorf("steps %d: want at least 1", n)
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for range n {
		if cp.done || ctx.Err() != nil {
			break
		}
		st, err, ok := cp.next()
		cp.last = time.Now()
		switch {
		case !ok:
			cp.finish("")
		case err != nil:
			cp.finish(err.Error())
		default:
			cp.steps = append(cp.steps, *st)
			if len(cp.steps) >= cp.setup.Campaign.Budget {
				cp.finish("")
			}
		}
	}
	return cp.status(), ctx.Err()
}

// CampaignState returns a campaign's status.
func (s *Server) CampaignState(id string) (*CampaignStatus, error) {
	cp, err := s.campaign(id)
	if err != nil {
		return nil, err
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.status(), nil
}

// Campaigns lists the campaigns, oldest first.
func (s *Server) Campaigns() []*CampaignStatus {
	s.camps.mu.Lock()
	ids := slices.Clone(s.camps.order)
	s.camps.mu.Unlock()
	out := []*CampaignStatus{}
	for _, id := range ids {
		if st, err := s.CampaignState(id); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// closeCampaigns ends every campaign's iteration (the server is closing).
func (s *Server) closeCampaigns() {
	s.camps.mu.Lock()
	all := make([]*campaign, 0, len(s.camps.byID))
	for _, cp := range s.camps.byID {
		all = append(all, cp)
	}
	s.camps.mu.Unlock()
	for _, cp := range all {
		cp.mu.Lock()
		cp.finish("")
		cp.mu.Unlock()
	}
}

// status is the campaign's status; cp.mu is held.
func (cp *campaign) status() *CampaignStatus {
	c := *cp.setup.Campaign
	st := &CampaignStatus{Campaign: &c, Steps: slices.Clone(cp.steps), Scale: cp.setup.Scale, Done: cp.done, Error: cp.err,
		Advantage: []*float64{}, NMA: []*float64{}}
	if st.Steps == nil {
		st.Steps = []lab.Step{}
	}
	curves := lab.Score(cp.steps, cp.setup.Scale, len(cp.steps))
	for i := range cp.steps {
		st.Advantage = append(st.Advantage, finite(curves.Advantage[i]))
		st.NMA = append(st.NMA, finite(curves.NMA[i]))
		if cp.steps[i].OK && (st.Best == nil || cp.steps[i].Value > st.Best.Value) {
			b := cp.steps[i]
			st.Best = &b
		}
	}
	return st
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// campaignRoutes serve the dashboard's campaign page.
func (s *Server) campaignRoutes() {
	if s.cfg.Campaign == nil {
		return
	}
	s.mux.HandleFunc("GET /v1/campaigns", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Campaigns())
	})
	s.mux.HandleFunc("POST /v1/campaigns", func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxCampaignBody) // a CSV may come inline
		var spec CampaignSpec
		if err := decodeStrict(r, &spec); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("campaign: the request has more than %d bytes; a CSV may have at most %d", tooLarge.Limit, dataset.DefaultLimits.Bytes))
				return
			}
			httpError(w, http.StatusBadRequest, "campaign: "+err.Error())
			return
		}
		st, err := s.StartCampaign(r.Context(), &spec)
		switch {
		case errors.Is(err, ErrTooManyCampaigns):
			httpError(w, http.StatusServiceUnavailable, err.Error())
			return
		case err != nil:
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, http.StatusCreated, st)
	})
	s.mux.HandleFunc("GET /v1/campaigns/{id}", func(w http.ResponseWriter, r *http.Request) {
		st, err := s.CampaignState(r.PathValue("id"))
		if err != nil {
			httpError(w, http.StatusNotFound, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, st)
	})
	s.mux.HandleFunc("POST /v1/campaigns/{id}/step", func(w http.ResponseWriter, r *http.Request) {
		n := 1
		if v := r.URL.Query().Get("n"); v != "" {
			var err error
			if n, err = strconv.Atoi(v); err != nil || n < 1 || n > maxBudget {
				httpError(w, http.StatusBadRequest, fmt.Sprintf("n=%q: want 1 to %d turns", v, maxBudget))
				return
			}
		}
		st, err := s.StepCampaign(r.Context(), r.PathValue("id"), n)
		switch {
		case errors.Is(err, ErrUnknownCampaign):
			httpError(w, http.StatusNotFound, err.Error())
		case err != nil:
			httpError(w, http.StatusInternalServerError, err.Error())
		default:
			writeJSON(w, http.StatusOK, st)
		}
	})
}

// decodeStrict decodes a JSON request body into v, refusing unknown fields.
func decodeStrict(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// RunsCampaigns reports whether the server was configured with Config.Campaign.
func (s *Server) RunsCampaigns() bool { return s.cfg.Campaign != nil }
