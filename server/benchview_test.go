package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
)

// labmate.bench() in a session's cells is the session's bench: what one cell loads, the next
// fills, and GET /v1/sessions/ID/bench shows the wells with their dye's colour, and the plate
// reader's last read of each plate.
func TestSessionBench(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), nil)
	c := f.dial(t, "s1", 0)
	var last int64
	for i, code := range []string{`import labmate
protocol = labmate.bench()
plate = protocol.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")`,
		`plate["D4"].load_liquid(protocol.define_liquid("yellow", "", "#ff0", {"tartrazine": 0.001}), 80)`,
		`reader = protocol.load_module("absorbanceReaderV1", 7)
reader.initialize("multi", [426, 630])
reader.read(plate)`} {
		op := []string{"op1", "op2", "op3"}[i]
		send(t, c, protocol.TypeRequest, "s1", op, &protocol.Request{Kind: "exec", Kernel: "python", Code: code})
		if msgs := until(t, c, op, &last); msgs[len(msgs)-1].Type != protocol.TypeComplete {
			t.Fatalf("cell %d: %v", i+1, types(msgs))
		}
	}
	code, body := jsonCall(t, "GET", f.http.URL+"/v1/sessions/s1/bench", "")
	var v runner.BenchView
	if err := json.Unmarshal([]byte(body), &v); code != http.StatusOK || err != nil || len(v.Labware) != 1 {
		t.Fatalf("GET bench: %d %s (%v)", code, body, err)
	}
	if w := v.Labware[0].Wells["D4"]; w.Volume != 80 || w.Color != "#c3ff00" || len(v.Labware[0].Columns) != 12 {
		t.Errorf("plate D4 = %+v in %s", w, body)
	}
	// The plate reader's last read of the plate: tartrazine absorbs at 426 nm, not at 630.
	if len(v.Readings) != 1 || v.Readings[0].Labware != "plate" || len(v.Readings[0].Wavelengths) != 2 {
		t.Fatalf("the readings: %s", body)
	}
	if d4 := v.Readings[0].Well("D4"); d4 == nil || !(d4.OD[0] > 10*d4.OD[1]) {
		t.Errorf("D4 read %+v", d4)
	}
	if code, body := jsonCall(t, "GET", f.http.URL+"/v1/sessions/nobody/bench", ""); code != http.StatusOK || body != "{\"labware\":[]}\n" {
		t.Errorf("an unknown session's bench: %d %q", code, body)
	}
}
