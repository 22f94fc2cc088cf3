package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/labmate/labmate/protocol"
)

// PastEnd is the error of an after=SEQ beyond a session's last seq: a follower that asks for
// it would wait for nothing it could have seen, so it is told instead, with the log's last
// seq (a client that saw messages a killed server never committed goes on from there).
type PastEnd struct {
	msg  string
	Last int64 // the last seq of the log
}

func (e *PastEnd) Error() string { return e.msg }

// CheckAfter refuses an after=SEQ past the end of session id's log (a typo, or a seq from
// another session or another server's log), naming the value and the last seq; an after at
// or below the last seq, or 0, is fine.
func (s *Runner) CheckAfter(ctx context.Context, id string, after int64) error {
	if after <= 0 {
		return nil
	}
	for _, err := range s.store.After(ctx, id, after-1) {
		if err != nil && !errors.Is(err, protocol.ErrUnknownSession) {
			return err
		}
		if err == nil {
			return nil // a message at seq ≥ after exists
		}
		break
	}
	last := int64(0)
	list, err := s.store.Sessions(ctx)
	if err != nil {
		return err
	}
	for _, si := range list {
		if si.ID == id {
			last = si.LastSeq
		}
	}
	if last == 0 {
		return &PastEnd{fmt.Sprintf("past the end of the log: after=%d, but session %s has no messages yet (follow it with after=0)", after, id), 0}
	}
	return &PastEnd{fmt.Sprintf("past the end of the log: after=%d, but the last seq of session %s is %d (follow it with after=%d or less)", after, id, last, last), last}
}
