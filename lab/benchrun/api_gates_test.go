package benchrun_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/labmate/labmate/lab/benchrun"
)

// TestSimulateAPIGates: where the Opentrons API refuses a protocol, the twin refuses it too,
// with the protocol line: names an API level does not have yet, a multi-channel transfer with
// no first-row well, the separate context simulate.get_protocol_api makes, API v1's objects
// (which a v2 protocol may import, as robot software before 4.0 let it).
func TestSimulateAPIGates(t *testing.T) {
	const setup = `from opentrons import simulate
metadata = {"apiLevel": "%s"}
def run(ctx):
    tips = ctx.load_labware("opentrons_96_tiprack_20ul", 1)
    plate = ctx.load_labware("nest_96_wellplate_100ul_pcr_full_skirt", 2)
    m20 = ctx.load_instrument("p20_multi_gen2", "left", tip_racks=[tips])
`
	for _, tc := range []struct{ name, level, body, want string }{
		{"coordinate slot before 2.15", "2.14", `    ctx.load_labware("nest_12_reservoir_15ml", "C2")`,
			"line 7: opentrons.protocol_api.APIVersionError: line 7: deck slot 'C2': coordinate slot names require API level 2.15"},
		{"coordinate slot", "2.15", `    ctx.load_labware("nest_12_reservoir_15ml", "C2")` + "\n    assert ctx.deck[5] is not None", ""},
		{"params before 2.18", "2.17", `    ctx.params`, "line 7: opentrons.protocol_api.APIVersionError: line 7: params requires API level 2.18"},
		{"adapter before 2.15", "2.14", `    ctx.load_adapter("opentrons_96_pcr_adapter", 3)`, "line 7: opentrons.protocol_api.APIVersionError: line 7: load_adapter requires API level 2.15"},
		{"no first-row well", "2.13", `    m20.transfer(5, plate.rows()[1][:2], plate.rows()[2][:2])`, "line 7: RuntimeError: line 7: Invalid source for multichannel transfer"},
		{"API v1 beside v2", "2.3", "    from opentrons import robot, labware  # noqa: F401\n    assert robot.commands() == []", ""},
		{"API v1 used", "2.3", "    from opentrons import instruments\n    instruments.P300_Single(mount='left')",
			"line 8: opentrons.protocol_api.UnsupportedError: line 8: opentrons.instruments.P300_Single is the Opentrons API v1"},
		{"main block", "2.13", "    pass\nif __name__ == \"__main__\":  # the robot never runs it\n    simulate.simulate(open(\"protocol.py\"))", ""},
		{"separate simulation", "2.13", `    simulate.get_protocol_api("2.13").home()`, "line 7: opentrons.protocol_api.UnsupportedError: line 7: .home on simulate.get_protocol_api('2.13')'s context"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := fmt.Sprintf(setup, tc.level) + tc.body + "\n"
			rep, err := benchrun.Simulate(context.Background(), code, &benchrun.Options{Start: starter(t)})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" && rep.Failure != "" || !strings.Contains(rep.Failure, tc.want) {
				t.Errorf("failure %q, want %q", rep.Failure, tc.want)
			}
		})
	}
}
