package mcp

import (
	"context"

	"github.com/labmate/labmate/runner"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// CampaignStepIn are the arguments of campaign_step.
type CampaignStepIn struct {
	ID    string `json:"id" jsonschema:"the campaign (campaign_start's id)"`
	Turns int    `json:"turns,omitempty" jsonschema:"how many turns to play (default 1)"`
}

// CampaignStatusIn are the arguments of campaign_status.
type CampaignStatusIn struct {
	ID string `json:"id" jsonschema:"the campaign"`
}

// TurnOut is one turn of a campaign.
type TurnOut struct {
	N          int               `json:"n"`
	Conditions map[string]string `json:"conditions,omitempty"`
	Value      float64           `json:"value,omitempty"`
	OK         bool              `json:"ok" jsonschema:"the turn measured something"`
	Error      string            `json:"error,omitempty"`
	Advantage  *float64          `json:"advantage,omitempty" jsonschema:"normalized advantage of this turn's measurement"`
	NMA        *float64          `json:"nma,omitempty" jsonschema:"normalized advantage of the best measurement so far"`
}

// CampaignOut is a campaign and its turns (all, or the new ones for campaign_step).
type CampaignOut struct {
	ID        string    `json:"id"`
	Space     string    `json:"space"`
	Objective string    `json:"objective"`
	Group     string    `json:"group,omitempty"`
	Planner   string    `json:"planner"`
	Budget    int       `json:"budget"`
	Bench     bool      `json:"bench,omitempty" jsonschema:"its experiments run as protocols on the bench twin, not looked up"`
	Played    int       `json:"played" jsonschema:"turns played so far"`
	Done      bool      `json:"done"`
	Reason    string    `json:"reason,omitempty" jsonschema:"how it ended: budget_spent, exhausted, error, idle, server_shutdown or server_restart"`
	Error     string    `json:"error,omitempty"`
	Best      *TurnOut  `json:"best,omitempty"`
	Turns     []TurnOut `json:"turns"`
}

func campaignOut(st *runner.CampaignStatus, from int) CampaignOut {
	c := st.Campaign
	o := CampaignOut{ID: c.ID, Space: c.Space, Objective: c.Objective, Group: c.Group, Planner: c.Planner, Budget: c.Budget, Bench: c.Bench,
		Played: len(st.Steps), Done: st.Done, Reason: string(st.Reason), Error: st.Error, Turns: []TurnOut{}}
	for i, s := range st.Steps {
		t := TurnOut{N: s.N, Conditions: s.Conditions, Value: s.Value, OK: s.OK, Error: s.Error, Advantage: st.Advantage[i], NMA: st.NMA[i]}
		if st.Best != nil && s.N == st.Best.N {
			b := t
			o.Best = &b
		}
		if i >= from {
			o.Turns = append(o.Turns, t)
		}
	}
	return o
}

func (l *Lab) addCampaignTools() {
	sdk.AddTool(l.mcp, &sdk.Tool{Name: "campaign_start", Title: "Start a campaign",
		Description: "Start a closed-loop optimization campaign on a fully mapped dataset (a CSV with one row per experiment): " +
			"a random or Bayesian planner chooses conditions, the dataset answers with the measured objective. " +
			"Give the CSV itself (csv_data) or a path under one of the server's data roots (--data-root; other paths are refused). " +
			"A table may have at most 16 MiB, 100,000 rows, 256 columns, 1000 levels per variable (2000 in all) and 1000 groups; " +
			"the budget at most 1000 turns and the group's conditions (200 for bayes). " +
			"With bench, each experiment runs as a protocol on the bench twin's heater-shaker plate (the Suzuki and Buchwald–Hartwig datasets). " +
			"Play it with campaign_step; scores are normalized advantage and NMA (1 = the best of the space)."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in runner.CampaignSpec) (*sdk.CallToolResult, CampaignOut, error) {
			st, err := l.srv.StartCampaign(ctx, &in)
			if err != nil {
				return nil, CampaignOut{}, err
			}
			return nil, campaignOut(st, 0), nil
		})
	sdk.AddTool(l.mcp, &sdk.Tool{Name: "campaign_step", Title: "Play campaign turns",
		Description: "Play the next turns of a campaign and return them, with the normalized advantage and NMA after each."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in CampaignStepIn) (*sdk.CallToolResult, CampaignOut, error) {
			before, err := l.srv.CampaignState(ctx, in.ID)
			if err != nil {
				return nil, CampaignOut{}, err
			}
			turns := in.Turns
			if turns <= 0 {
				turns = 1
			}
			st, err := l.srv.StepCampaign(ctx, in.ID, turns)
			if err != nil {
				return nil, CampaignOut{}, err
			}
			return nil, campaignOut(st, len(before.Steps)), nil
		})
	sdk.AddTool(l.mcp, &sdk.Tool{Name: "campaign_status", Title: "Campaign status",
		Description: "A campaign's turns so far, its best measurement, its NMA curve and how it ended. " +
			"Campaigns are kept in the server's log: one played before a restart is still there (one the server stopped cannot be continued).",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest, in CampaignStatusIn) (*sdk.CallToolResult, CampaignOut, error) {
			st, err := l.srv.CampaignState(ctx, in.ID)
			if err != nil {
				return nil, CampaignOut{}, err
			}
			return nil, campaignOut(st, 0), nil
		})
}
