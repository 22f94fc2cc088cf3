package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Noted returns b with note called after each command, with what came of it (an event or an
// error), before the caller sees it: how a simulation lists a protocol's commands and a
// persisted bench journals the ones done.
// The commands of concurrent callers are carried out and noted one at a time, so the notes are
// in the order the commands ran.
func Noted(b Backend, note func(Command, *Event, error)) Backend {
	return &noted{Backend: b, note: note}
}

type noted struct {
	Backend
	mu   sync.Mutex
	note func(Command, *Event, error)
}

func (n *noted) Do(ctx context.Context, cmd Command) (*Event, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ev, err := n.Backend.Do(ctx, cmd)
	n.note(cmd, ev, err)
	return ev, err
}

// Replay carries out on d the commands of a journal, one Command in JSON a line, as a
// persisted bench keeps them (the twin is deterministic, so replaying gives back the state,
// tips' history included). It returns how many it replayed; an error names the journal line.
func Replay(ctx context.Context, d *Deck, r io.Reader) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	n := 0
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return n, fmt.Errorf("bench: journal: replay stopped at line %d: %w", n+1, err)
		}
		var cmd Command
		if err := json.Unmarshal(sc.Bytes(), &cmd); err != nil {
			return n, fmt.Errorf("bench: journal line %d: %w", n+1, err)
		}
		if _, err := d.Do(cmd); err != nil {
			return n, fmt.Errorf("bench: journal line %d: %w", n+1, err)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("bench: journal line %d: %w", n+1, err)
	}
	return n, nil
}

// String says the command in words, as errors do: "aspirate 50 µL from res/A1 (left)".
func (c Command) String() string { return describe(c.Name, &c.Args) }
