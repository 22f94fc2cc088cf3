package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
)

// Limits of Serve: a kernel's cell is untrusted code and may send anything.
const (
	// MaxLine is the longest command line Serve reads; a longer one ends the connection.
	MaxLine = 1 << 20
	// MaxConns is how many connections Serve keeps open at once; more are refused.
	MaxConns = 4
)

// Reply is Serve's answer to one command line: exactly one of Event and Error. Labware comes
// with the event of a load_labware: what the client needs to address the wells.
type Reply struct {
	Event   *Event        `json:"event,omitempty"`
	Labware *LabwareReply `json:"labware,omitempty"`
	Error   *ReplyError   `json:"error,omitempty"`
}

// LabwareReply describes loaded labware to a client.
type LabwareReply struct {
	Name        string     `json:"name"`           // how commands name it
	Slot        int        `json:"slot,omitempty"` // in a deck command's event
	LoadName    string     `json:"load_name"`
	DisplayName string     `json:"display_name"`
	Ordering    [][]string `json:"ordering"` // wells by column
	IsTiprack   bool       `json:"is_tiprack"`
	Definition  *Labware   `json:"definition,omitempty"` // the geometry: wells, dimensions, parameters
}

// ReplyError is a refused command or a line that is not one.
type ReplyError struct {
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
}

// Serve answers the connections ln accepts until ctx ends: each line a connection sends is a
// Command in JSON, carried out by b, and gets one Reply line. A malformed line gets an error
// reply and the connection goes on; a line over MaxLine ends the connection. Serve closes ln
// and returns nil when ctx ends, or the listener's error.
func Serve(ctx context.Context, ln net.Listener, b Backend) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, MaxConns)
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("bench: serve: %w", err)
		}
		select {
		case slots <- struct{}{}:
		default:
			writeReply(c, &Reply{Error: &ReplyError{Message: fmt.Sprintf("bench: %d connections are open already", MaxConns)}})
			c.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			stop := context.AfterFunc(ctx, func() { c.Close() })
			defer stop()
			defer c.Close()
			serveConn(ctx, c, b)
		}()
	}
}

func serveConn(ctx context.Context, c net.Conn, b Backend) { serveLines(ctx, c, c, b, false) }

// answer carries out one command line.
func answer(ctx context.Context, b Backend, line []byte) *Reply {
	var cmd Command
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cmd); err != nil {
		return &Reply{Error: &ReplyError{Message: fmt.Sprintf("bench: a command line that is not a command %s: %v", `{"name": …, "args": {…}, "line": N}`, err)}}
	}
	ev, err := b.Do(ctx, cmd)
	if err != nil {
		return &Reply{Error: &ReplyError{Message: err.Error(), Line: cmd.Line}}
	}
	rep := &Reply{Event: ev}
	if cmd.Name == "load_labware" {
		name := cmd.Args.Label
		if name == "" {
			n, _ := strconv.Atoi(cmd.Args.Slot) // the deck took it as a slot number
			name = strconv.Itoa(n)
		}
		lw, err := b.Labware(ctx, name)
		if err != nil {
			return &Reply{Error: &ReplyError{Message: err.Error(), Line: cmd.Line}}
		}
		rep.Labware = &LabwareReply{Name: name, LoadName: lw.Parameters.LoadName, DisplayName: lw.Metadata.DisplayName,
			Ordering: lw.Ordering, IsTiprack: lw.Parameters.IsTiprack, Definition: lw}
	}
	return rep
}

func writeReply(w io.Writer, rep *Reply) {
	b, err := json.Marshal(rep)
	if err != nil { // an event always marshals; say so rather than send nothing
		b, _ = json.Marshal(&Reply{Error: &ReplyError{Message: "bench: reply: " + err.Error()}})
	}
	w.Write(append(b, '\n'))
}
