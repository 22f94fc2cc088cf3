package client_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/benchrun"
	"github.com/labmate/labmate/protocol"
)

// The modules through the Octave functions, named as the Python module's methods: the plate
// reader's reading comes back to Octave and as telemetry, the heater-shaker heats, shakes and
// holds a Suzuki well until it reacts, and analyze measures it exactly as the twin does; an
// unknown module and an uninitialized reader are refused by name.
func TestOctaveModules(t *testing.T) {
	p, err := eval.Find("data/reactions/suzuki_perera2018.csv")
	if err != nil {
		t.Skip(err)
	}
	rx, err := bench.LoadReaction(p, &bench.Suzuki)
	if err != nil {
		t.Fatal(err)
	}
	d := bench.NewDeck()
	const product = "C1=C(C2=C(C)C=CC3N(C4OCCCC4)N=CC2=3)C=CC2=NC=CC=C12"
	if err := d.Equip(&bench.Equipment{Reactions: []*bench.Reaction{rx}, HeaterShaker: &bench.HeaterShakerOptions{},
		Calibration: map[string]float64{product: 2, "6-Bromoquinoline": 1}, Analyzer: &bench.AnalyzerOptions{}}); err != nil {
		t.Fatal(err)
	}
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	ctx := context.Background()
	srv, err := benchrun.Serve(ctx, opts.Workspace, &benchrun.ServeOptions{Deck: d})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	k, err := octave.Start(ctx, &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	res := kerneltest.Exec(ctx, k, &kernel.Cell{Timeout: time.Minute, Code: `dyes = load_labware ("corning_96_wellplate_360ul_flat", 1, "dyes");
load_liquid (dyes.wells.C3, 200, define_liquid ("yellow", "", "#ffd700", struct ("tartrazine", 5e-5)));
reader = load_module ("absorbanceReaderV1", 7);
try
  read (reader, dyes);
catch e
  printf ("refused: %s\n", e.message);
end_try_catch
initialize (reader, "multi", [426 630]);
r = read (reader, dyes);
printf ("peak %d %d\n", r.od_by_well.C3(1) > 10 * r.od_by_well.C3(2) && r.od_by_well.C3(1) > 0.5, isequal (size (r.od), [96 2]));
hs = load_module ("heaterShakerModuleV1", 4);
rx = load_labware ("corning_96_wellplate_360ul_flat", hs, "rx");
load_liquid (rx.wells.A1, 100, {"6-Bromoquinoline", 0.01, "2a, Boronic Acid", 0.01, "Pd(OAc)2", 0.001, "SPhos", 0.002, "NaOH", 0.02, "MeCN", 19});
close_labware_latch (hs);
set_and_wait_for_temperature (hs, 90);
s = set_and_wait_for_shake_speed (hs, 1000);
delay ("minutes", 60);
printf ("temperature %g, %d rpm\n", current_temperature (hs), s.shake_rpm);
deactivate_shaker (hs);
try
  load_module ("thermocyclerModuleV2", 5);
catch e
  printf ("unsupported: %s\n", e.message);
end_try_catch`})
	if res.Res == nil || res.Res.Status != protocol.StatusOK {
		t.Fatalf("cell: %+v\n%s", res.Res, res.Output())
	}
	out := res.Output()
	for _, want := range []string{"refused: bench: line 5: read_plate dyes (reader in slot 7): the plate reader in slot 7 is not initialized",
		"peak 1 1", "temperature 90, 1000 rpm", "unsupported: load_module is not supported by labmate's bench twin for 'thermocyclerModuleV2'"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	series := res.Series()
	if got := series["od_dyes_C3_426"]; len(got) != 1 || !(got[0] > 0.5) {
		t.Errorf("od_dyes_C3_426 telemetry %v, want one reading above 0.5 OD", got)
	}
	if got := series["hs4_temp_c"]; len(got) != 5 || got[2] != 90 {
		t.Errorf("hs4_temp_c telemetry %v, want 25, 25, then 90", got)
	}
	// The twin's own analysis of the well, on a copy of the bench as it is now.
	ev, err := srv.Deck().Do(bench.Command{Name: "analyze", Args: bench.Args{Well: "rx/A1"}})
	if err != nil {
		t.Fatal(err)
	}
	res = kerneltest.Exec(ctx, k, &kernel.Cell{Timeout: time.Minute, Code: fmt.Sprintf(`a = analyze (rx.wells.A1);
printf ("yield %%.12g\n", yield_vs_limiting (a, %q, "6-Bromoquinoline"));
printf ("amount %%.12g\n", amount_mM (a, "6-Bromoquinoline"));
st = set_target_temperature (hs, 95);
printf ("target %%g\n", st.temperature_c);`, product)})
	if res.Res == nil || res.Res.Status != protocol.StatusOK {
		t.Fatalf("analyze: %+v\n%s", res.Res, res.Output())
	}
	want, err := ev.Chromatogram.YieldVsLimiting(product, "6-Bromoquinoline")
	if err != nil || math.Abs(want-92.63) > 0.01 {
		t.Fatalf("the twin's yield %v (%v), want the dataset's 92.6 %%", want, err)
	}
	m := regexp.MustCompile(`yield (\S+)`).FindStringSubmatch(res.Output())
	if m == nil {
		t.Fatalf("no yield in\n%s", res.Output())
	}
	if got, _ := strconv.ParseFloat(m[1], 64); math.Abs(got-want) > 1e-9*want {
		t.Errorf("yield_vs_limiting %v, the twin's analysis says %v", got, want)
	}
	if !strings.Contains(res.Output(), "target 95\n") {
		t.Errorf("set_target_temperature did not heat to 95 °C:\n%s", res.Output())
	}
}

// An Opentrons name the twin does not model is refused by name, at the caller's line.
func TestOctaveUnsupported(t *testing.T) {
	k, _ := benchKernel(t)
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: benchSetup + "\ntouch_tip (p);", Timeout: time.Minute})
	if r.Res == nil || r.Res.Status != protocol.StatusError || r.Res.Line != 6 ||
		!strings.HasPrefix(r.Res.Error, "touch_tip is not supported by labmate's bench twin (the Octave bench functions: load_labware, ") {
		t.Fatalf("touch_tip: %+v\n%s", r.Res, r.Output())
	}
}

// A protocol file in the workspace that shadows a function the driver or the bench functions
// call (rows.m shadows rows, which strtrim and strcat call) fails its cell at once, saying
// what it called, instead of leaving the cell without an end.
func TestOctaveShadowedFunction(t *testing.T) {
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	if err := os.WriteFile(filepath.Join(opts.Workspace, "rows.m"), []byte("x = 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	serveBench(t, opts.Workspace)
	k, err := octave.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	start := time.Now()
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: "y = strtrim (\" a \")", Timeout: 30 * time.Second})
	if r.Res == nil || r.Res.Status != protocol.StatusError || !strings.Contains(r.Res.Error, "invalid call to script") || time.Since(start) > 10*time.Second {
		t.Fatalf("after %v: %+v\n%s", time.Since(start), r.Res, r.Output())
	}
	if r = kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: "z = 2", Timeout: 30 * time.Second}); r.Res == nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("the next cell: %+v\n%s", r.Res, r.Output())
	}
}
