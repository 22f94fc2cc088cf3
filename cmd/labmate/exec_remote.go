package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

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
		if err != nil || !loopbackURL(u) {
			return "", nil
		}
		if data, err = defaultDataDir(); err != nil {
			return "", nil
		}
	}
	return client.ReadToken(filepath.Join(data, server.TokenFile))
}

func loopbackURL(u *url.URL) bool {
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// execRemote runs req on a server through the client package and reports its messages:
// to raw as NDJSON when it is set, else through out; retries are told on stderr.
func execRemote(ctx context.Context, out report.Reporter, raw *json.Encoder, stderr io.Writer, serverURL, token, session string, req *protocol.Request) error {
	c, err := client.New(serverURL, token)
	if err != nil {
		return err
	}
	var told bool
	c.OnRetry = func(err error, wait time.Duration) {
		if !told {
			fmt.Fprintf(stderr, "labmate: %v; retrying for up to %v\n", err, c.RetryFor)
			told = true
		}
	}
	var last *operation.Message
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
		last = &operation.Message{Type: m.Type, Payload: payload}
	}
	if last == nil || !last.Type.Terminal() {
		return exitError{2}
	}
	return exitCode(last)
}

// artifactURL is where the server serves an artifact of session.
func artifactURL(serverURL, session, rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.TrimRight(serverURL, "/") + "/v1/sessions/" + url.PathEscape(session) + "/artifacts/" + strings.Join(parts, "/")
}
