package client_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/python"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/protocol"
)

// The modules through the protocol API: a plate the bench held before the cell is in
// loaded_labwares, the plate reader's reading comes back to Python and as telemetry, and the
// heater-shaker's temperature is telemetry; an unknown module or an uninitialized reader is
// refused with the twin's reason.
func TestPythonModules(t *testing.T) {
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	dir := filepath.Join(opts.Workspace, ".labmate")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "bench.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	d := bench.NewDeck()
	if err := d.LoadLabware("corning_96_wellplate_360ul_flat", "1", "dyes"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Do(bench.Command{Name: "load_liquid", Args: bench.Args{Well: "dyes/C3", Volume: 200,
		Concentrations: map[string]float64{"tartrazine": 5e-5}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- bench.Serve(ctx, ln, bench.NewTwin(d)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	k, err := python.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	res := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: `import labmate
from opentrons import protocol_api
protocol = labmate.bench()
plate = protocol.loaded_labwares[1]
reader = protocol.load_module("absorbanceReaderV1", 7)
try:
    reader.read(plate)
except protocol_api.CommandError as e:
    print("refused:", e)
reader.initialize("multi", [426, 630])
r = reader.read(plate)
print("peak", r[426]["C3"] > 10 * r[630]["C3"] and r[426]["C3"] > 0.5)
hs = protocol.load_module("heaterShakerModuleV1", 4)
hs.set_and_wait_for_temperature(60)
print("temperature", hs.current_temperature)
try:
    protocol.load_module("flexStackerModuleV1", 5)
except protocol_api.UnsupportedError as e:
    print("unsupported:", e)`})
	if res.Res == nil || res.Res.Status != "ok" {
		t.Fatalf("cell: %s", res.Output())
	}
	out := res.Output()
	for _, want := range []string{"refused: bench: line 7: read_plate dyes (reader in slot 7): the plate reader in slot 7 is not initialized",
		"peak True", "temperature 60", "load_module('flexStackerModuleV1') is not modelled by labmate's bench twin"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	series := map[string][]float64{}
	for _, o := range res.Obs {
		if o.Kind == protocol.ObsTelemetry {
			series[o.Sample.Name] = append(series[o.Sample.Name], o.Sample.Value)
		}
	}
	if got := series["od_dyes_C3_426"]; len(got) != 1 || !(got[0] > 0.5) {
		t.Errorf("od_dyes_C3_426 telemetry %v, want one reading above 0.5 OD (all: %v)", got, series)
	}
	if got := series["hs4_temp_c"]; len(got) != 2 || got[1] != 60 {
		t.Errorf("hs4_temp_c telemetry %v, want 25 then 60", got)
	}
	if _, ok := series["od_dyes_A1_426"]; ok {
		t.Error("an empty well's absorbance is telemetry")
	}
}
