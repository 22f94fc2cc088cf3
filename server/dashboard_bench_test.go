package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server"
)

// TestDashboardBench drives the dashboard in a real headless Chromium: a cell fills a plate
// on the session's bench (labmate.bench()) well by well, and the bench's plate map colours the
// wells with the dye's colour while the cell still runs; the layout holds at 800 px.
func TestDashboardBench(t *testing.T) {
	const token = "bench-test-token-0123456789"
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) {
		c.Token = token
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "python", Version: "3"}} })
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

// TestDashboardBenchSpectra drives the bench view in a real headless Chromium: the deck is its
// 11 slots and the trash, laid out as on an OT-2, each naming its labware; a plate reader's
// scan of three dyes is drawn as their spectra, absorbance against wavelength, one line per
// filled well in its colour, with both axes labelled; the layout holds at 800 px.
func TestDashboardBenchSpectra(t *testing.T) {
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) {
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "python", Version: "3"}} })
	})
	ctx := browser(t, 90*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the dashboard connects", `document.querySelector("#conn").textContent === "live"`)
	waitJS(t, ctx, "the kernels are listed", `document.querySelector("#kernel").value === "python"`)
	runCell(t, ctx, `import labmate
protocol = labmate.bench()
plate = protocol.load_labware("corning_96_wellplate_360ul_flat", 1, "dyes")
tips = protocol.load_labware("opentrons_96_tiprack_300ul", 3)
res = protocol.load_labware("nest_12_reservoir_15ml", 2, "res")
p = protocol.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
for col, (name, colour, species) in enumerate([("yellow", "#ff0", "tartrazine"), ("red", "#f00", "allura red AC"), ("blue", "#00f", "brilliant blue FCF")]):
    res.wells()[col].load_liquid(protocol.define_liquid(name, "", colour, {species: 0.00003}), 10000)
    p.transfer(200, res.wells()[col], plate.wells()[col])
reader = protocol.load_module("absorbanceReaderV1", 7)
reader.initialize("multi", list(range(380, 721, 20)))
r = reader.read(plate)
print("read", len(r), "wavelengths")
`)
	waitJS(t, ctx, "the cell completes", lastOp+`.includes("completed in")`)
	const spec = `document.querySelector('#deck figure.spectrum[data-spectrum="dyes"]')`
	waitJS(t, ctx, "the spectra are drawn, a line per filled well", `!!`+spec+` && `+spec+`.querySelectorAll("polyline.spec").length === 3`)
	if got := evalString(t, ctx, `[...`+spec+`.querySelectorAll("text.axis-label")].map((t) => t.textContent).join(", ")`); got != "wavelength (nm), absorbance (OD)" {
		t.Errorf("the spectra's axis labels: %q", got)
	}
	// Each dye peaks where it absorbs: yellow (tartrazine) near 426 nm, red near 504, blue near 630.
	peaks := evalString(t, ctx, `[...`+spec+`.querySelectorAll("polyline.spec")].map((l) => l.dataset.well + " " + l.querySelector("title").textContent.replace(/^.*at /, "")).join(", ")`)
	if peaks != "A1 420 nm, B1 500 nm, C1 620 nm" {
		t.Errorf("the spectra's peaks: %q", peaks)
	}
	if got := evalString(t, ctx, `[...document.querySelectorAll("#deck-grid .slot")].map((s) => s.dataset.slot + ":" + (s.querySelector(".what") || {textContent: ""}).textContent).join(" ")`); got != "10: 11: 12:trash 7: 8: 9: 4: 5: 6: 1:dyes 2:res 3:Opentrons OT-2 96 Tip Rack 300 µL" {
		t.Errorf("the deck grid: %q", got)
	}
	screenshot(t, ctx, "bench-spectra.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(800, 900)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the page fits 800 px", `window.innerWidth === 800 && document.documentElement.scrollWidth <= window.innerWidth && `+spec+`.getBoundingClientRect().right <= window.innerWidth`)
	if bad := evalString(t, ctx, laidOut("#page-lab")); bad != "" {
		t.Errorf("the Lab page with the bench at 800 px:\n%s", bad)
	}
	screenshot(t, ctx, "bench-spectra-800.png")
}
