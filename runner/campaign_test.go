package runner

import (
	"context"
	"errors"
	"log"
	"strings"
	"testing"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/protocol"
)

// sweeps play an uploaded dataset's first group with a planner that tries its conditions in
// order.
type sweeps struct{}

func (sweeps) Setup(_ context.Context, spec *CampaignSpec) (*CampaignSetup, error) {
	tb, err := dataset.Read(strings.NewReader(spec.CSVData), "csv_data", &dataset.Options{Objective: spec.Objective, Vars: spec.Vars})
	if err != nil {
		return nil, err
	}
	g := tb.Groups[0]
	return &CampaignSetup{Instrument: g, Planner: &sweep{space: g.Space()}, Scale: g.Scale,
		Campaign: &lab.Campaign{Space: tb.Name, Objective: tb.Objective, Planner: "sweep"}}, nil
}

type sweep struct{ space *lab.Space }

func (p *sweep) Next(_ context.Context, steps []lab.Step) (*lab.Proposal, error) {
	n := len(steps)
	if n >= p.space.Size() {
		return nil, lab.ErrExhausted
	}
	return &lab.Proposal{Conditions: p.space.Conditions([]int{n})}, nil
}

const fourWells = "lig,yield\nL1,1\nL2,2\nL3,3\nL4,4\n"

// The runner's campaigns are bounded: at most MaxLiveCampaigns unfinished (the next is refused with 503
// until one finishes), a budget within the space, an upload within the dataset limits; a
// finished campaign lets go of its dataset and planner and keeps its turns.
func TestCampaignBounds(t *testing.T) {
	srv, err := New(context.Background(), Config{Store: protocol.NewMemStore(), Campaigns: sweeps{}, Log: log.New(t.Output(), "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	start := func() error {
		_, err := srv.StartCampaign(context.Background(), &CampaignSpec{CSVData: fourWells, Objective: "yield", Vars: []string{"lig"}, Budget: 2})
		return err
	}
	var ids []string
	for range MaxLiveCampaigns {
		st, err := srv.StartCampaign(context.Background(), &CampaignSpec{CSVData: fourWells, Objective: "yield", Vars: []string{"lig"}, Budget: 2})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.Campaign.ID)
	}
	if err := start(); !errors.Is(err, ErrTooManyCampaigns) || !strings.Contains(err.Error(), "16 are unfinished (at most 16") {
		t.Errorf("campaign %d: %v", MaxLiveCampaigns+1, err)
	}
	st, err := srv.StepCampaign(context.Background(), ids[0], 2)
	if err != nil || !st.Done || len(st.Steps) != 2 {
		t.Fatalf("finishing one: %v %+v", err, st)
	}
	if cp := srv.live(ids[0]); cp != nil {
		t.Error("a finished campaign is still held in memory, with its dataset and planner")
	}
	if st, err := srv.CampaignState(context.Background(), ids[0]); err != nil || len(st.Steps) != 2 || st.Best == nil || st.Best.Value != 2 || st.Reason != CampaignEndBudget {
		t.Errorf("a finished campaign's status: %v %+v", err, st)
	}
	if err := start(); err != nil {
		t.Errorf("after one finished: %v", err)
	}
	// An idle campaign makes room.
	cp := srv.live(ids[1])
	cp.mu.Lock()
	cp.last = cp.last.Add(-campaignIdle - 1)
	cp.mu.Unlock()
	if err := start(); err != nil {
		t.Errorf("with one idle: %v", err)
	}
	if st, _ := srv.CampaignState(context.Background(), ids[1]); !st.Done || st.Reason != CampaignEndIdle || !strings.Contains(st.Error, "without a turn") {
		t.Errorf("the idle campaign: %+v", st)
	}
	srv.closeCampaigns()

	for _, c := range []struct {
		spec *CampaignSpec
		want string
	}{
		{&CampaignSpec{CSVData: fourWells, Objective: "yield", Vars: []string{"lig"}, Budget: 5}, "campaign: budget 5: the space has only 4 conditions"},
		{&CampaignSpec{CSVData: strings.Repeat("x", 16<<20+1), Objective: "yield", Vars: []string{"lig"}, Budget: 1}, "campaign: csv_data has 16777217 bytes; at most 16777216 are allowed"},
	} {
		if _, err := srv.StartCampaign(context.Background(), c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	if _, err := srv.StepCampaign(context.Background(), "nope", 1); !errors.Is(err, ErrUnknownCampaign) {
		t.Errorf("unknown: %v", err)
	}
}
