package protocol_test

import (
	"fmt"

	"github.com/labmate/labmate/protocol"
)

// ExampleSessionLog runs one exec operation through a session's log, then resumes like a client that
// reconnects with after=3.
func ExampleSessionLog() {
	const session, op = "s1", "op1"
	log := protocol.NewSessionLog(session)
	steps := []struct {
		typ     protocol.Type
		payload any
	}{
		{protocol.TypeRequest, protocol.Request{Kind: "exec", Kernel: "python", Code: "print(6*7)"}},
		{protocol.TypeAck, protocol.StatePayload{State: protocol.Acknowledged}},
		{protocol.TypeStart, protocol.StatePayload{State: protocol.Started}},
		{protocol.TypeProgress, protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsStdout, Line: "42"}}},
		{protocol.TypeComplete, protocol.Complete{Result: &protocol.Result{Status: protocol.StatusOK}}},
	}
	for _, s := range steps {
		m, err := protocol.NewMessage(s.typ, session, op, s.payload)
		if err != nil {
			panic(err)
		}
		if m, err = log.Append(m); err != nil {
			panic(err)
		}
		fmt.Println(m.Seq, m.Type, log.State(op))
	}

	// The operation is over: nothing more may be appended to it.
	late, _ := protocol.NewMessage(protocol.TypeProgress, session, op, protocol.Progress{})
	_, err := log.Append(late)
	fmt.Println(err)

	// A client that had seen up to seq 3 resumes.
	for m := range log.After(3) {
		fmt.Println("resumed", m.Seq, m.Type)
		if m.Type == protocol.TypeProgress {
			var p protocol.Progress
			if err := m.Decode(&p); err != nil {
				panic(err)
			}
			fmt.Println("  stdout:", p.Observation.Line)
		}
	}
	// Output:
	// 1 operation_request PENDING
	// 2 operation_ack ACKNOWLEDGED
	// 3 operation_start STARTED
	// 4 operation_progress IN_PROGRESS
	// 5 operation_complete COMPLETED
	// protocol: illegal transition: operation_progress in state COMPLETED
	// resumed 4 operation_progress
	//   stdout: 42
	// resumed 5 operation_complete
}
