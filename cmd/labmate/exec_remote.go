package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/internal/shellword"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/report"
	"github.com/labmate/labmate/server"
	"github.com/labmate/labmate/server/client"
)

// serverToken is the token labmate serve keeps in DATA/token, for a server on this machine
// or when data is given: the local server's token is not sent elsewhere unasked.
func serverToken(serverURL, data string) (string, error) {
	if data == "" {
		u, err := url.Parse(serverURL)
		if err != nil || !server.LoopbackHost(u.Hostname()) {
			return "", nil
		}
		if data, err = defaultDataDir(); err != nil {
			return "", nil
		}
	}
	return client.ReadToken(filepath.Join(data, server.TokenFile))
}

// execRemote runs req on a server through the client package and reports its messages:
// to raw as NDJSON when it is set, else through out; retries are told on stderr.
func execRemote(ctx context.Context, out report.Reporter, raw *json.Encoder, stderr io.Writer, serverURL, token, session string, req *protocol.Request) error {
	c, err := client.New(serverURL, token)
	if err != nil {
		return err
	}
	// A refused first connection is a wrong address more often than a server binding its
	// port: 2 s, then a clear error; a server reached once is waited for (restarting).
	c.FirstContact = 2 * time.Second
	var told bool
	c.OnRetry = func(err error, wait time.Duration) {
		if !told {
			fmt.Fprintf(stderr, "labmate: %v; retrying for up to %v\n", err, c.RetryFor)
			told = true
		}
	}
	var last *operation.Message
	kept := keptArtifacts{on: true} // the server keeps them
	for m, err := range c.Exec(ctx, session, req) {
		if err != nil {
			return err
		}
		payload, err := protocol.DecodePayload(m)
		if err != nil {
			return err
		}
		if raw != nil {
			err = raw.Encode(m)
		} else {
			err = out.Message(m.Type, payload)
		}
		if err != nil {
			return err
		}
		kept.add(payload)
		last = &operation.Message{Type: m.Type, Payload: payload}
	}
	if last == nil || !last.Type.Terminal() {
		return exitError{2}
	}
	kept.note(stderr, session, "on the server's machine, ")
	return exitCode(last)
}

// keptArtifacts remembers the first artifact with a digest a cell reported: kept in the
// artifact store, when on (the cell's process keeps them).
type keptArtifacts struct {
	on    bool
	first string
}

func (k *keptArtifacts) add(payload any) {
	if p, ok := payload.(*protocol.Progress); ok && k.on && k.first == "" && p.Observation != nil {
		if a := p.Observation.Artifact; a != nil && a.SHA256 != "" {
			k.first = a.Path
		}
	}
}

// note says on stderr how to get the kept artifacts back once the workspace has gone.
func (k *keptArtifacts) note(stderr io.Writer, session, where string) {
	if k.first != "" {
		fmt.Fprintf(stderr, "labmate: artifacts kept in session %s: %slabmate session show %s --artifact %s gives one back\n",
			session, where, shellword.Quote(session), shellword.Quote(k.first))
	}
}

// artifactURL is where the server serves an artifact of session.
func artifactURL(serverURL, session, rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.TrimRight(serverURL, "/") + "/v1/sessions/" + url.PathEscape(session) + "/artifacts/" + strings.Join(parts, "/")
}

// checkExecFlags refuses flags that would be ignored: the server's flags without --server, and
// the local workspace with it.
func checkExecFlags(cmd *cobra.Command, serverURL string) error {
	f := cmd.Flags()
	if serverURL == "" {
		for _, name := range []string{"session", "token"} {
			if f.Changed(name) {
				return fmt.Errorf("--%s is for a cell run on a server: give --server URL too (or leave --%s out to run here)", name, name)
			}
		}
		return nil
	}
	if f.Changed("workspace") {
		return errors.New("--workspace is for a cell run here: with --server the cell runs in its session's workspace on the server (leave --workspace out)")
	}
	return nil
}

// noteNewSession says so on stderr when --session names a session the server does not have
// (a mistyped name would otherwise start a new session without a word).
func noteNewSession(ctx context.Context, stderr io.Writer, serverURL, token, session string) error {
	c, err := client.New(serverURL, token)
	if err != nil {
		return err
	}
	list, err := c.Sessions(ctx)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(list, func(s protocol.SessionInfo) bool { return s.ID == session }) {
		fmt.Fprintf(stderr, "labmate: session %q is new on %s: starting it\n", session, serverURL)
	}
	return nil
}
