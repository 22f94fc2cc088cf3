// Package benchrun runs Opentrons-style protocols on the liquid-handler bench (lab/bench) in a
// Python kernel (an Opentrons Protocol API v2 file: metadata and def run(protocol):) or an
// Octave kernel (a script of the bench functions of kernel/octave, run as it stands: its lines
// are Octave's; one that defines function run (protocol) has it called, as Python's run), and
// keeps a workspace's bench: the bench is served on
// WORKSPACE/.labmate/bench.sock while kernels run there (labmate.bench() in a cell connects to
// it; Octave's bench functions use the named pipes bench.in and bench.out beside it), and the
// commands it carried out are journaled in WORKSPACE/.labmate/bench.jsonl, which sandboxed code
// cannot write, so that the next run starts from what earlier runs left; the journal's first
// line records the deck's equipment (its reaction datasets), so that a replay reacts alike. The
// CLI (labmate lab simulate|run|show), agent runs, server sessions and the tools
// simulate_protocol and bench_state (Tools) all go through it.
package benchrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/sandbox"
)

// The bench of a workspace: its directory, socket and journal of the commands carried out.
const (
	Dir     = ".labmate"
	Socket  = "bench.sock"
	Journal = "bench.jsonl"
	// FIFOIn and FIFOOut are the named pipes the bench is served on too, for a kernel with
	// no sockets (Octave; see bench.ServeFIFO).
	FIFOIn  = "bench.in"
	FIFOOut = "bench.out"
)

// Open returns the bench of workspace ws: a fresh deck with ws's journal replayed. The
// journal is read only when it is a regular file in a .labmate that labmate made (see
// openBenchDir), of at most MaxJournal bytes; a symbolic link, a FIFO or a device there is an
// error that says so, never followed or waited on.
func Open(ctx context.Context, ws string) (*bench.Deck, error) {
	dir, err := openBenchDir(ws, false)
	if errors.Is(err, errNoDir) {
		return bench.NewDeck(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("the bench: %w", err)
	}
	defer dir.close()
	return replay(ctx, dir)
}

// replay is the deck of dir's journal replayed.
func replay(ctx context.Context, dir *benchDir) (*bench.Deck, error) {
	d := bench.NewDeck()
	r, err := dir.readJournal()
	if err != nil || r == nil {
		return d, err
	}
	defer r.Close()
	if _, err := bench.Replay(ctx, d, r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir.path, Journal), err)
	}
	return d, nil
}

// Refuse is the Approver of a run nobody can be asked in: every command on a backend that
// moves a real instrument is refused, saying why.
func Refuse(why string) bench.Approver {
	return func(context.Context, bench.Command) error {
		return fmt.Errorf("%w: %s", bench.ErrNotApproved, why)
	}
}

// ServeOptions say which bench Serve serves.
type ServeOptions struct {
	// Keep serves the workspace's own bench (its journal replayed) and journals the commands
	// carried out; otherwise the bench is a fresh twin and nothing persists.
	Keep bool
	// Deck, when set, is the bench served instead of a fresh or the journal's one; with Keep,
	// the commands carried out on it are appended to the journal.
	Deck *bench.Deck
	// Approve is asked before each command on a physical backend (nil: Refuse).
	Approve bench.Approver
	// Note, when set, is told every command and what came of it, in order.
	Note func(bench.Command, *bench.Event, error)
	// UID and GID, when UID is above 0, are the host user and group sandboxed code runs as,
	// who must reach the bench: its socket and pipes are given to them (0: the sandbox's
	// default account when labmate runs as root, sandbox.HostIdentity). Either way they are
	// mode 0600, reachable by nobody else.
	UID, GID int
}

// Served is a bench served on a workspace's socket. Close it.
type Served struct {
	twin    *bench.Twin
	dir     *benchDir
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	serr    error
	journal *os.File
	mu      sync.Mutex
	jerr    error
}

// Serve serves the bench of workspace ws on WS/.labmate/bench.sock, and on the named pipes
// bench.in and bench.out beside it, until Close.
func Serve(ctx context.Context, ws string, opts *ServeOptions) (*Served, error) {
	if opts == nil {
		opts = &ServeOptions{}
	}
	dir, err := openBenchDir(ws, true)
	if err != nil {
		return nil, fmt.Errorf("the bench: %w", err)
	}
	d := opts.Deck
	s := &Served{dir: dir}
	fail := func(err error) (*Served, error) {
		s.closeJournal()
		dir.close()
		return nil, err
	}
	if opts.Keep && d == nil {
		if d, err = replay(ctx, dir); err != nil {
			return fail(err)
		}
	}
	if d == nil {
		d = bench.NewDeck()
	}
	if opts.Keep {
		if s.journal, err = dir.openFile(Journal, os.O_WRONLY|os.O_APPEND|os.O_CREATE); err != nil {
			return fail(fmt.Errorf("the bench's journal: %w", err))
		}
		// A new journal of an equipped deck starts with its equipment, so that a replay
		// reacts and reads as this bench does.
		if fi, err := s.journal.Stat(); err == nil && fi.Size() == 0 {
			if e := d.Equipment(); e != nil {
				if err := bench.WriteEquipment(s.journal, e); err != nil {
					return fail(fmt.Errorf("the bench's journal: %w", err))
				}
			}
		}
	}
	dir.remove(Socket) // one a crashed run left
	ln, err := net.Listen("unix", dir.proc(Socket))
	if err != nil {
		return fail(fmt.Errorf("the bench: %w", err))
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // Close unlinks it through dir
	uid, gid := -1, -1
	if opts.UID > 0 {
		uid, gid = opts.UID, opts.GID
	} else if u, g, ok := sandbox.HostIdentity(); ok {
		uid, gid = u, g
	}
	if err := givePath(dir, Socket, uid, gid); err != nil {
		ln.Close()
		dir.remove(Socket)
		return fail(fmt.Errorf("the bench: %w", err))
	}
	approve := opts.Approve
	if approve == nil {
		approve = Refuse("nobody can be asked to approve it here")
	}
	s.twin = bench.NewTwin(d)
	enc := json.NewEncoder(s.journal)
	note := func(c bench.Command, ev *bench.Event, err error) {
		if err == nil && s.journal != nil {
			s.mu.Lock()
			if s.jerr == nil {
				s.jerr = enc.Encode(c)
			}
			s.mu.Unlock()
		}
		if opts.Note != nil {
			opts.Note(c, ev, err)
		}
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	backend := bench.Guard(bench.Noted(s.twin, note), approve)
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		s.serr = bench.Serve(sctx, ln, backend)
	}()
	go func() {
		defer s.wg.Done()
		// Best effort: on a filesystem without named pipes the socket is served alone, and
		// Octave's bench functions say there is no bench.
		bench.ServeFIFOOwned(sctx, dir.proc(FIFOIn), dir.proc(FIFOOut), backend, uid, gid)
	}()
	return s, nil
}

// Deck returns a copy of the served deck as it is now.
func (s *Served) Deck() *bench.Deck {
	var c *bench.Deck
	s.twin.View(func(d *bench.Deck) { c = d.Clone() })
	return c
}

// Close stops serving (connected kernels lose the bench) and says whether serving or the
// journal failed.
func (s *Served) Close() error {
	s.cancel()
	s.wg.Wait()
	s.dir.remove(Socket)
	s.dir.close()
	jerr := s.closeJournal()
	if s.serr != nil {
		return s.serr
	}
	if jerr != nil {
		return fmt.Errorf("the bench's journal: %w", jerr)
	}
	return nil
}

func (s *Served) closeJournal() error {
	if s.journal == nil {
		return nil
	}
	err := s.journal.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jerr != nil {
		return s.jerr
	}
	return err
}
