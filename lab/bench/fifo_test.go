package bench_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/lab/bench"
)

// serveFIFO serves b on a pair of pipes in a temporary directory until the test ends.
func serveFIFO(t *testing.T, b bench.Backend) (in, out string) {
	t.Helper()
	dir := t.TempDir()
	in, out = filepath.Join(dir, "bench.in"), filepath.Join(dir, "bench.out")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- bench.ServeFIFO(ctx, in, out, b) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(in); err == nil {
			t.Errorf("%s is left", in)
		}
	})
	for i := 0; i < 200; i++ {
		if fi, err := os.Stat(out); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
			return in, out
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the pipes were not made")
	return
}

// A client of the pipes gets each reply with its ID; a reply nobody read (a client
// interrupted after it sent) is there for the next one to skip.
func TestServeFIFO(t *testing.T) {
	in, out := serveFIFO(t, bench.NewTwin(bench.NewDeck()))
	rd, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	wr, err := os.OpenFile(in, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer wr.Close()
	if _, err := wr.WriteString("old.1 {\"name\": \"deck\"}\n" +
		"c.1 {\"name\": \"load_labware\", \"args\": {\"load_name\": \"corning_96_wellplate_360ul_flat\", \"slot\": \"1\", \"label\": \"plate\"}, \"line\": 3}\n" +
		"c.2 {\"name\": \"aspirate\", \"args\": {\"volume\": 5, \"well\": \"plate/A1\"}, \"line\": 4}\n" +
		"c.3 garbage\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(rd)
	reply := func(id string) bench.Reply {
		t.Helper()
		for {
			head := make([]byte, bench.FrameHeader)
			if _, err := io.ReadFull(r, head); err != nil {
				t.Fatal(err)
			}
			n, err := strconv.Atoi(strings.TrimSpace(string(head)))
			if err != nil {
				t.Fatalf("header %q: %v", head, err)
			}
			body := make([]byte, n)
			if _, err := io.ReadFull(r, body); err != nil {
				t.Fatal(err)
			}
			line := string(body)
			if !strings.HasSuffix(line, "\n") {
				t.Fatalf("reply %q does not end its line", line)
			}
			if rest, ok := strings.CutPrefix(line, id+" "); ok {
				var rep bench.Reply
				if err := json.Unmarshal([]byte(rest), &rep); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				return rep
			}
		}
	}
	if rep := reply("c.1"); rep.Labware == nil || rep.Labware.Name != "plate" || len(rep.Labware.Ordering) != 12 {
		t.Errorf("load_labware: %+v", rep)
	}
	if rep := reply("c.2"); rep.Error == nil || rep.Error.Line != 4 || !strings.Contains(rep.Error.Message, "aspirate 5 µL from plate/A1") {
		t.Errorf("aspirate without a pipette: %+v", rep)
	}
	if rep := reply("c.3"); rep.Error == nil || !strings.Contains(rep.Error.Message, "not a command") {
		t.Errorf("garbage: %+v", rep)
	}
}

// slowBackend answers each command after a pause.
type slowBackend struct {
	bench.Backend
	pause time.Duration
}

func (s slowBackend) Do(ctx context.Context, cmd bench.Command) (*bench.Event, error) {
	time.Sleep(s.pause)
	return s.Backend.Do(ctx, cmd)
}

// While a command takes longer than Heartbeat, empty frames come before its reply.
func TestServeFIFOHeartbeat(t *testing.T) {
	in, out := serveFIFO(t, slowBackend{bench.NewTwin(bench.NewDeck()), 3*bench.Heartbeat + bench.Heartbeat/2})
	rd, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	wr, err := os.OpenFile(in, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer wr.Close()
	if _, err := wr.WriteString("x.1 {\"name\": \"deck\"}\n"); err != nil {
		t.Fatal(err)
	}
	beats := 0
	for {
		head := make([]byte, bench.FrameHeader)
		if _, err := io.ReadFull(rd, head); err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(head)))
		if err != nil {
			t.Fatalf("header %q: %v", head, err)
		}
		if n == 0 {
			beats++
			continue
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(rd, body); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(body), "x.1 {\"event\"") {
			t.Errorf("reply %q", body)
		}
		break
	}
	if beats < 2 { // 3, or fewer on a loaded machine that drops ticks
		t.Errorf("%d heartbeats before a reply of %v, want 3", beats, 3*bench.Heartbeat+bench.Heartbeat/2)
	}
}
