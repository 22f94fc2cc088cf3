package server

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/dataset"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

// sweeps play an uploaded dataset's first group with a planner that tries its conditions in
// order.
type sweeps struct{}

func (sweeps) Setup(_ context.Context, spec *runner.CampaignSpec) (*runner.CampaignSetup, error) {
	tb, err := dataset.Read(strings.NewReader(spec.CSVData), "csv_data", &dataset.Options{Objective: spec.Objective, Vars: spec.Vars})
	if err != nil {
		return nil, err
	}
	g := tb.Groups[0]
	return &runner.CampaignSetup{Instrument: g, Planner: &sweep{space: g.Space()}, Scale: g.Scale,
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

// A campaign posted while the runner holds its most unfinished ones is refused with 503 and
// the runner's words (the bounds themselves: runner's TestCampaignBounds).
func TestCampaignRefusedWhenFull(t *testing.T) {
	srv, err := New(context.Background(), Config{Config: runner.Config{Store: protocol.NewMemStore(), Campaigns: sweeps{}, Log: log.New(t.Output(), "", 0)}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	for range runner.MaxLiveCampaigns {
		if _, err := srv.StartCampaign(context.Background(), &runner.CampaignSpec{CSVData: fourWells, Objective: "yield", Vars: []string{"lig"}, Budget: 2}); err != nil {
			t.Fatal(err)
		}
	}
	body := fmt.Sprintf(`{"csv_data":%q,"objective":"yield","vars":["lig"],"budget":2}`, fourWells)
	resp, err := http.Post(hs.URL+"/v1/campaigns", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "16 are unfinished (at most 16") {
		t.Errorf("campaign %d: %d %s", runner.MaxLiveCampaigns+1, resp.StatusCode, b)
	}
}
