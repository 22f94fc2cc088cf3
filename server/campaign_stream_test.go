package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
	"github.com/labmate/labmate/runner"
)

// plans are sweeps with the planner the spec names: "sweep" (the default), "giveup" (nothing
// left to try after one turn) or "fail" (an error at the second turn).
type plans struct{}

func (plans) Setup(ctx context.Context, spec *runner.CampaignSpec) (*runner.CampaignSetup, error) {
	setup, err := sweeps{}.Setup(ctx, spec)
	if err != nil {
		return nil, err
	}
	switch spec.Planner {
	case "giveup":
		setup.Planner = stopAfter{setup.Planner, 1, lab.ErrExhausted}
	case "fail":
		setup.Planner = stopAfter{setup.Planner, 1, errors.New("the planner's model went away")}
	}
	if spec.Planner != "" {
		setup.Campaign.Planner = spec.Planner
	}
	return setup, nil
}

// stopAfter plays n turns of p, then returns err.
type stopAfter struct {
	p   lab.Planner
	n   int
	err error
}

func (s stopAfter) Next(ctx context.Context, steps []lab.Step) (*lab.Proposal, error) {
	if len(steps) >= s.n {
		return nil, s.err
	}
	return s.p.Next(ctx, steps)
}

// campaignServer is a server with campaigns over the sqlite log at path, on loopback HTTP.
type campaignServer struct {
	srv   *Server
	http  *httptest.Server
	store protocol.Store
	once  sync.Once
}

func openCampaignServer(t *testing.T, path string) *campaignServer {
	t.Helper()
	store, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(context.Background(), Config{Config: runner.Config{Store: store, Campaigns: plans{}, Log: log.New(t.Output(), "", 0)}})
	if err != nil {
		t.Fatal(err)
	}
	cs := &campaignServer{srv: srv, http: httptest.NewServer(srv), store: store}
	t.Cleanup(cs.close)
	return cs
}

// close stops the server cleanly, then its store.
func (cs *campaignServer) close() {
	cs.once.Do(func() {
		cs.http.Close()
		cs.srv.Close()
		cs.store.Close()
	})
}

// do sends a request (a JSON body when body is not empty) and returns the status and body.
func (cs *campaignServer) do(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, cs.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// start posts a campaign on fourWells and returns its id.
func (cs *campaignServer) start(t *testing.T, planner string, budget int) string {
	t.Helper()
	code, body := cs.do(t, "POST", "/v1/campaigns",
		fmt.Sprintf(`{"csv_data":%q,"objective":"yield","vars":["lig"],"planner":%q,"budget":%d}`, fourWells, planner, budget))
	var st runner.CampaignStatus
	if err := json.Unmarshal(body, &st); code != http.StatusCreated || err != nil {
		t.Fatalf("POST /v1/campaigns: %d %s", code, body)
	}
	return st.Campaign.ID
}

func (cs *campaignServer) step(t *testing.T, id string, n int) *runner.CampaignStatus {
	t.Helper()
	code, body := cs.do(t, "POST", fmt.Sprintf("/v1/campaigns/%s/step?n=%d", id, n), "")
	var st runner.CampaignStatus
	if err := json.Unmarshal(body, &st); code != http.StatusOK || err != nil {
		t.Fatalf("step %s: %d %s", id, code, body)
	}
	return &st
}

func (cs *campaignServer) get(t *testing.T, path string) []byte {
	t.Helper()
	code, body := cs.do(t, "GET", path, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	return body
}

func (cs *campaignServer) dial(t *testing.T, session string) *websocket.Conn {
	t.Helper()
	url := strings.Replace(cs.http.URL, "http", "ws", 1) + "/v1/sessions/" + session + "/ws?after=0"
	c, _, err := websocket.Dial(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// next reads the follower's next message and its campaign event (nil for a run_end).
func next(t *testing.T, c *websocket.Conn) (*protocol.EnhancedMessage, *runner.CampaignEvent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, data, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("reading the campaign's session: %v", err)
	}
	var m protocol.EnhancedMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Type != protocol.TypeRunEvent {
		return &m, nil
	}
	var ev runner.CampaignEvent
	if err := m.Decode(&ev); err != nil {
		t.Fatal(err)
	}
	return &m, &ev
}

// A campaign played over REST is a stream in the log — its session, a start, a run_event per
// turn as it is played (a WebSocket follower of the session sees each one at once), a run_end
// that says how it ended — and the log is what GET /v1/campaigns and /v1/campaigns/ID read:
// after the server is closed and another opened over the same file, both answer the same.
func TestCampaignStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "labmate.db")
	cs := openCampaignServer(t, path)

	id := cs.start(t, "sweep", 3)
	ws := cs.dial(t, id)
	m, ev := next(t, ws)
	if ev == nil || ev.Kind != protocol.KindCampaign || ev.Type != runner.CampaignStart || ev.Campaign.ID != id || ev.Campaign.Budget != 3 ||
		ev.Scale == nil || ev.Scale.Max != 4 || m.SessionID != id || m.OperationID != id {
		t.Fatalf("the first message: %+v %+v", m, ev)
	}
	for turn := 1; turn <= 3; turn++ {
		st := cs.step(t, id, 1)
		m, ev := next(t, ws)
		if ev == nil || ev.Type != runner.CampaignStep || ev.Step.N != turn || ev.Step.Value != float64(turn) || m.Seq != int64(turn+1) {
			t.Fatalf("turn %d: the follower got %s %+v", turn, m.Payload, ev)
		}
		if ev.NMA == nil || st.NMA[turn-1] == nil || *ev.NMA != *st.NMA[turn-1] || *ev.Advantage != *st.Advantage[turn-1] {
			t.Errorf("turn %d: the event's curves %v %v, the status's %v %v", turn, ev.Advantage, ev.NMA, st.Advantage[turn-1], st.NMA[turn-1])
		}
	}
	m, _ = next(t, ws)
	var end protocol.RunEnd
	if m.Type != protocol.TypeRunEnd || m.Decode(&end) != nil || end.Reason != runner.CampaignEndBudget {
		t.Fatalf("after the budget: %s %s", m.Type, m.Payload)
	}

	gaveUp := cs.start(t, "giveup", 3)
	if st := cs.step(t, gaveUp, 3); !st.Done || st.Reason != runner.CampaignEndExhausted || st.Error != "" || len(st.Steps) != 1 {
		t.Errorf("a planner with nothing left: %+v", st)
	}
	failed := cs.start(t, "fail", 3)
	if st := cs.step(t, failed, 3); !st.Done || st.Reason != runner.CampaignEndError || !strings.Contains(st.Error, "model went away") || len(st.Steps) != 1 {
		t.Errorf("a planner that fails: %+v", st)
	}

	ops, err := cs.store.Operations(context.Background(), id)
	if err != nil || len(ops) != 1 || ops[0].Kind != protocol.KindCampaign || ops[0].State != protocol.Ended {
		t.Errorf("the log lists the campaign as %+v (%v)", ops, err)
	}
	list := cs.get(t, "/v1/campaigns")
	var sts []runner.CampaignStatus
	if err := json.Unmarshal(list, &sts); err != nil || len(sts) != 3 || sts[0].Campaign.ID != id || sts[2].Campaign.ID != failed {
		t.Fatalf("GET /v1/campaigns: %v %s", err, list)
	}
	if st := sts[0]; !st.Done || len(st.Steps) != 3 || st.Best == nil || st.Best.Value != 3 || len(st.NMA) != 3 || math.Abs(*st.NMA[2]-1.0/3) > 1e-12 {
		t.Errorf("the swept campaign: %+v", st)
	}
	status := map[string][]byte{}
	for _, c := range []string{id, gaveUp, failed} {
		status[c] = cs.get(t, "/v1/campaigns/"+c)
	}
	cs.close()
	replay(t, path, nil)

	cs = openCampaignServer(t, path)
	if diff := cmp.Diff(string(list), string(cs.get(t, "/v1/campaigns"))); diff != "" {
		t.Errorf("GET /v1/campaigns after a restart (-before +after):\n%s", diff)
	}
	for c, before := range status {
		if diff := cmp.Diff(string(before), string(cs.get(t, "/v1/campaigns/"+c))); diff != "" {
			t.Errorf("GET /v1/campaigns/%s after a restart (-before +after):\n%s", c, diff)
		}
	}
	// An ended campaign stays ended; the server goes on with new ones.
	if st := cs.step(t, id, 1); len(st.Steps) != 3 || st.Reason != runner.CampaignEndBudget {
		t.Errorf("stepping an ended campaign: %+v", st)
	}
	// A campaign unfinished when the server shuts down ends with it.
	live := cs.start(t, "sweep", 3)
	cs.step(t, live, 1)
	cs.close()
	var e protocol.RunEnd
	replay(t, path, func(store protocol.Store) {
		for m, err := range store.Operation(context.Background(), live, live) {
			if err != nil {
				t.Fatal(err)
			}
			if m.Type == protocol.TypeRunEnd && m.Decode(&e) != nil {
				t.Fatal(m.Payload)
			}
		}
	})
	if e.Reason != runner.CampaignEndShutdown || !strings.Contains(e.Error, "cannot be continued") {
		t.Errorf("the run_end of a campaign the server shut down: %+v", e)
	}
}

// replay replays the sqlite log at path through the state machine, then hands it to read
// (when not nil) and closes it.
func replay(t *testing.T, path string, read func(protocol.Store)) {
	t.Helper()
	store, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	testutil.ReplayStore(t, store)
	if read != nil {
		read(store)
	}
}

// A campaign in flight when the server dies (its log stops where it was) is closed by the
// next server's recovery: listed, with the turns it played, as stopped by a server restart,
// and not continued.
func TestCampaignCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "labmate.db")
	cs := openCampaignServer(t, path)
	id := cs.start(t, "sweep", 4)
	cs.step(t, id, 2)
	cs.store.Close() // the crash: nothing more reaches the log
	cs.close()

	cs = openCampaignServer(t, path)
	var st runner.CampaignStatus
	if err := json.Unmarshal(cs.get(t, "/v1/campaigns/"+id), &st); err != nil {
		t.Fatal(err)
	}
	if !st.Done || st.Reason != runner.CampaignEndRestart || !strings.Contains(st.Error, "server stopped") || !strings.Contains(st.Error, "cannot be continued") ||
		len(st.Steps) != 2 || len(st.NMA) != 2 || st.Best == nil || st.Best.Value != 2 {
		t.Errorf("a campaign the server crashed in: %+v", st)
	}
	if again := cs.step(t, id, 1); !cmp.Equal(*again, st) {
		t.Errorf("stepping it: %+v", again)
	}
	var sts []runner.CampaignStatus
	if err := json.Unmarshal(cs.get(t, "/v1/campaigns"), &sts); err != nil || len(sts) != 1 || sts[0].Reason != runner.CampaignEndRestart {
		t.Errorf("GET /v1/campaigns: %v %+v", err, sts)
	}
	testutil.ReplayStore(t, cs.store)
}

// Bad requests keep their clear errors, and an id that is another kind of stream (a session
// of operations, an agent run) is no campaign.
func TestCampaignErrors(t *testing.T) {
	cs := openCampaignServer(t, filepath.Join(t.TempDir(), "labmate.db"))
	ctx := context.Background()
	run, _ := protocol.NewMessage(protocol.TypeRunEvent, "run-1", "run-1", map[string]any{"type": "plan"})
	if _, err := cs.store.Append(ctx, run); err != nil {
		t.Fatal(err)
	}
	id := cs.start(t, "sweep", 2)
	for _, c := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/v1/campaigns/nope", "", http.StatusNotFound, `unknown campaign "nope"`},
		{"GET", "/v1/campaigns/run-1", "", http.StatusNotFound, `unknown campaign "run-1"`},
		{"POST", "/v1/campaigns/nope/step", "", http.StatusNotFound, `unknown campaign "nope"`},
		{"POST", "/v1/campaigns/" + id + "/step?n=0", "", http.StatusBadRequest, `n="0": want 1 to 1000 turns`},
		{"POST", "/v1/campaigns", fmt.Sprintf(`{"csv_data":%q,"objective":"yield","vars":["lig"],"budget":-1}`, fourWells), http.StatusBadRequest, "budget -1: want 1 to 1000 turns"},
		{"POST", "/v1/campaigns", fmt.Sprintf(`{"csv_data":%q,"objective":"yield","vars":["lig"],"budget":1001}`, fourWells), http.StatusBadRequest, "budget 1001: want 1 to 1000 turns"},
		{"POST", "/v1/campaigns", fmt.Sprintf(`{"csv_data":%q,"objective":"yield","vars":["lig"],"budget":5}`, fourWells), http.StatusBadRequest, "the space has only 4 conditions"},
		{"POST", "/v1/campaigns", `{"colour":1}`, http.StatusBadRequest, `unknown field "colour"`},
	} {
		code, body := cs.do(t, c.method, c.path, c.body)
		var e struct{ Error string }
		if json.Unmarshal(body, &e); code != c.code || !strings.Contains(e.Error, c.want) {
			t.Errorf("%s %s: %d %s; want %d %q", c.method, c.path, code, body, c.code, c.want)
		}
	}
	if _, err := cs.srv.StepCampaign(ctx, id, 0); err == nil || !strings.Contains(err.Error(), "want at least 1") {
		t.Errorf("0 steps: %v", err)
	}
	if st := cs.step(t, id, 2); !st.Done {
		t.Errorf("the campaign after the bad requests: %+v", st)
	}
}
