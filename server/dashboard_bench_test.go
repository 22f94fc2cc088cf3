package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
)

// TestDashboardBench drives the dashboard in a real headless Chromium: a cell fills a plate
// on the session's bench (labmate.bench()) well by well, and the bench's plate map colours the
// wells with the dye's colour while the cell still runs; the layout holds at 800 px.
func TestDashboardBench(t *testing.T) {
	const token = "bench-test-token-0123456789"
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) {
		c.Token = token
		c.Kernels = func(context.Context) []server.KernelInfo { return []server.KernelInfo{{Name: "python", Version: "3"}} }
	})
	ctx := browser(t, 90*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/?token="+token)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the dashboard connects", `document.querySelector("#conn").textContent === "live"`)
	waitJS(t, ctx, "the kernels are listed", `document.querySelector("#kernel").value === "python"`)
	runCell(t, ctx, `import time, labmate
protocol = labmate.bench()
plate = protocol.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
res = protocol.load_labware("nest_12_reservoir_15ml", 2, "res")
tips = protocol.load_labware("opentrons_96_tiprack_300ul", 3)
p = protocol.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
res["A1"].load_liquid(protocol.define_liquid("blue", "", "#00f", {"brilliant blue FCF": 0.0001}), 10000)
p.pick_up_tip()
for well in plate.rows()[0]:
    p.transfer(100, res["A1"], well, new_tip="never")
    time.sleep(0.4)
p.drop_tip()
`)
	const filled = `document.querySelectorAll('#deck figure[data-labware="plate"] circle.well.full[fill="#00c4ff"]').length`
	waitJS(t, ctx, "the plate map colours wells while the cell runs", filled+` >= 2 && `+filled+` < 12 && `+lastOp+`.includes("running")`)
	waitJS(t, ctx, "the whole row is coloured when the cell ends", filled+` === 12 && `+lastOp+`.includes("completed")`)
	screenshot(t, ctx, "bench.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(800, 900)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the page fits 800 px", `document.documentElement.scrollWidth <= window.innerWidth && `+
		`document.querySelector('#deck figure[data-labware="plate"]').getBoundingClientRect().right <= window.innerWidth`)
	screenshot(t, ctx, "bench-800.png")
}
