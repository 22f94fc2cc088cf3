package client_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/kernel/octave"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
)

// benchKernel starts a sandboxed Octave kernel in a workspace whose bench is served.
func benchKernel(t testing.TB) (kernel.Kernel, *bench.Deck) {
	t.Helper()
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	d := serveBench(t, opts.Workspace)
	k, err := octave.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k, d
}

const benchSetup = `plate = load_labware ("corning_96_wellplate_360ul_flat", 1, "plate");
res = load_labware ("nest_12_reservoir_15ml", 3, "res");
tips = load_labware ("opentrons_96_tiprack_300ul", 2);
p = load_instrument ("p300_single_gen2", "left", tips);
load_liquid (res.wells.A1, 10000, "tartrazine");`

// The bench's functions in the Octave kernel: a protocol colouring every other row of a plate
// over two cells (what the first cell loaded, the second uses), well volumes and tips as
// telemetry under the Python module's names.
func TestOctaveColourEveryOtherRow(t *testing.T) {
	k, d := benchKernel(t)
	cells := []string{benchSetup, `for r = 1:2:numel (plate.rows)
  transfer (p, 100, res.wells.A1, plate.rows{r});
endfor
pick_up_tip (p);
aspirate (p, 50, bottom (wells (plate, "A1"), 1));
dispense (p, 50, top (plate.wells.A2));
mix (p, 2, 30, plate.wells.A2);
drop_tip (p);
transfer (p, [20 30], res.wells.A1, wells (plate, "B1", "B2"));
distribute (p, 25, res.wells.A1, {plate.wells.H1, {plate.wells.H2}});
printf ("%d wells, %s\n", numel (wells (plate)), tips.name);`}
	var last *kerneltest.Result
	for i, c := range cells {
		if last = kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: c, Timeout: time.Minute}); last.Res == nil || last.Res.Status != protocol.StatusOK {
			t.Fatalf("cell %d: %+v\n%s", i+1, last.Res, last.Output())
		}
	}
	if !strings.Contains(last.Output(), "96 wells, 2") {
		t.Errorf("output:\n%s", last.Output())
	}
	if r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: "top (plate)", Timeout: time.Minute}); r.Res == nil || r.Res.Status == protocol.StatusOK ||
		!strings.Contains(r.Output(), "top: the first argument must be a well, such as plate.wells.A1") {
		t.Errorf("top of a plate: %+v\n%s", r.Res, r.Output())
	}
	k.Close()
	for r, row := range "ABCDEFGH" {
		for c := 1; c <= 12; c++ {
			want := 0.0
			if r%2 == 0 {
				want = 100
			}
			switch {
			case row == 'A' && c == 1:
				want = 50
			case row == 'A' && c == 2:
				want = 150
			case row == 'B' && c <= 2:
				want = float64(10 + 10*c)
			case row == 'H' && c <= 2:
				want = 25
			}
			well := fmt.Sprintf("plate/%c%d", row, c)
			if got, err := d.Well(well); err != nil || got.Volume != want {
				t.Errorf("%s holds %v µL (%v), want %v", well, got.Volume, err, want)
			}
		}
	}
	series := last.Series()
	for name, want := range map[string]float64{"vol_plate_A1": 50, "vol_plate_A2": 150, "vol_plate_G12": 100, "vol_res_A1": 10000 - 4*12*100 - 50 - 70, "tips_used": 7} { // distribute draws 20 µL more, to dispose of
		if got := series[name]; len(got) == 0 || got[len(got)-1] != want {
			t.Errorf("%s telemetry %v, want it to end at %v", name, got, want)
		}
	}
	onProtocolClock(t, last.Times("vol_plate_A1"))
}

// A refused command is an Octave error whose message is the twin's, exactly; the bench and
// the session go on.
func TestOctaveErrorIsTheTwins(t *testing.T) {
	k, _ := benchKernel(t)
	if r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: benchSetup, Timeout: time.Minute}); r.Res == nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("setup: %+v\n%s", r.Res, r.Output())
	}
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: "pick_up_tip (p);\naspirate (p, 400, res.wells.A1);", Timeout: time.Minute})
	// The same commands on a fresh twin, with the cell's line.
	d := bench.NewDeck()
	for _, l := range [][3]string{{"corning_96_wellplate_360ul_flat", "1", "plate"}, {"nest_12_reservoir_15ml", "3", "res"}, {"opentrons_96_tiprack_300ul", "2", ""}} {
		if err := d.LoadLabware(l[0], l[1], l[2]); err != nil {
			t.Fatal(err)
		}
	}
	cmds := []bench.Command{
		{Name: "load_instrument", Args: bench.Args{Instrument: "p300_single_gen2", Mount: "left", TipRacks: []string{"2"}}},
		{Name: "load_liquid", Args: bench.Args{Well: "res/A1", Volume: 10000, Concentrations: map[string]float64{"tartrazine": 1}}},
		{Name: "pick_up_tip", Args: bench.Args{Mount: "left"}, Line: 1},
	}
	for _, c := range cmds {
		if _, err := d.Do(c); err != nil {
			t.Fatal(err)
		}
	}
	_, want := d.Do(bench.Command{Name: "aspirate", Args: bench.Args{Mount: "left", Volume: 400, Well: "res/A1"}, Line: 2})
	if want == nil {
		t.Fatal("the twin took 400 µL into a p300")
	}
	if r.Res == nil || r.Res.Status != protocol.StatusError || r.Res.Error != want.Error() || r.Res.Line != 2 {
		t.Fatalf("result %+v, want the error %q at line 2\n%s", r.Res, want, r.Output())
	}
	if !strings.Contains(strings.Join(r.Stderr, "\n"), "error: "+want.Error()) {
		t.Errorf("stderr does not say %q:\n%s", want, strings.Join(r.Stderr, "\n"))
	}
	r = kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: "aspirate (p, 200, res.wells.A1); dispense (p, 200, plate.wells.B1);", Timeout: time.Minute})
	if r.Res == nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("after the error: %+v\n%s", r.Res, r.Output())
	}
	if got := r.Series()["vol_plate_B1"]; len(got) != 1 || got[0] != 200 {
		t.Errorf("vol_plate_B1 %v, want [200]", got)
	}
}

// BenchmarkOctaveCommands is the bench's commands per second through the Octave functions:
// aspirates and dispenses, each a round trip through the pipes, with telemetry.
func BenchmarkOctaveCommands(b *testing.B) {
	k, _ := benchKernel(b)
	const loops = 250 // each 4 commands: there and back
	benchCommands(b, k, benchSetup+"\npick_up_tip (p);", fmt.Sprintf(`for i = 1:%d
  aspirate (p, 20, res.wells.A1);
  dispense (p, 20, res.wells.A2);
  aspirate (p, 20, res.wells.A2);
  dispense (p, 20, res.wells.A1);
endfor`, loops), 4*loops)
}

// slowDelay is a bench whose delay commands wait until release is closed, as a physical
// backend waits for approval.
type slowDelay struct {
	bench.Backend
	release chan struct{}
}

func (s *slowDelay) Do(ctx context.Context, cmd bench.Command) (*bench.Event, error) {
	if cmd.Name == "delay" {
		select {
		case <-s.release:
		case <-ctx.Done():
		}
	}
	return s.Backend.Do(ctx, cmd)
}

// A cell waiting on a long bench command is interrupted within a heartbeat (Octave sees
// interrupts only between reads of the pipe), keeps its workspace, and the next command skips
// the reply the interrupted one never read.
func TestOctaveInterruptDuringCommand(t *testing.T) {
	opts := testutil.KernelOptions(t)
	opts.Workspace = t.TempDir()
	dir := filepath.Join(opts.Workspace, ".labmate")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d := bench.NewDeck()
	slow := &slowDelay{Backend: bench.NewTwin(d), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	uid, gid, ok := sandbox.HostIdentity() // the sandbox's own account, when labmate is root
	if !ok {
		uid, gid = -1, -1
	}
	go func() {
		done <- bench.ServeFIFOOwned(ctx, filepath.Join(dir, "bench.in"), filepath.Join(dir, "bench.out"), slow, uid, gid)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(filepath.Join(dir, "bench.out")); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	k, err := octave.Start(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: benchSetup, Timeout: time.Minute}); r.Res == nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("setup: %+v\n%s", r.Res, r.Output())
	}
	sent := make(chan time.Time, 1)
	timer := time.AfterFunc(300*time.Millisecond, func() { sent <- time.Now(); k.Interrupt() })
	r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: `bench_command ("delay", struct ("minutes", 5));`, Timeout: time.Minute})
	timer.Stop()
	took := time.Since(<-sent)
	if r.Res == nil || r.Res.Status != protocol.StatusInterrupted || !r.Res.WorkspaceOK {
		t.Fatalf("the waiting cell: %+v\n%s", r.Res, r.Output())
	}
	if took > time.Second {
		t.Errorf("the interrupt took %v", took)
	}
	close(slow.release) // the delay's reply goes into the pipe, unread
	r = kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: "pick_up_tip (p); aspirate (p, 50, res.wells.A1); dispense (p, 50, plate.wells.A1);", Timeout: time.Minute})
	if r.Res == nil || r.Res.Status != protocol.StatusOK {
		t.Fatalf("after the interrupt: %+v\n%s", r.Res, r.Output())
	}
	if got := r.Series()["vol_plate_A1"]; len(got) != 1 || got[0] != 50 {
		t.Errorf("vol_plate_A1 %v, want [50]", got)
	}
}
