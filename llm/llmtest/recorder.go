package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// RecordEnv is the environment variable that switches recorders from replaying to recording:
// LLMTEST_RECORD=1 go test ./llm/openai -run TestReplay.
const RecordEnv = "LLMTEST_RECORD"

// Interaction is one recorded HTTP exchange. Only the path, the request body and a few
// harmless headers are kept: never a key, a cookie or the host.
type Interaction struct {
	Method   string            `json:"method"`
	Path     string            `json:"path"` // with the query, without the host
	Request  json.RawMessage   `json:"request,omitempty"`
	Status   int               `json:"status"`
	Header   map[string]string `json:"header,omitempty"` // kept response headers
	Response string            `json:"response"`         // the body as sent (SSE text for streams)
}

// keptHeaders are the response headers a cassette stores; everything else (cookies, request
// ids, organisation names) is dropped.
var keptHeaders = []string{"Content-Type", "Retry-After", "Retry-After-Ms"}

// Recorder is an http.RoundTripper that records a session of real provider traffic to a
// cassette file, or replays the cassette offline. It records when RecordEnv is set to 1 (the
// test then needs its provider, such as a real API key or an llmtest.Server) and replays
// otherwise: requests must then come in the recorded order with the recorded bodies (compared as
// JSON), or the test fails naming the difference; no network is used. Plug it into an adapter
// through its HTTPClient option.
type Recorder struct {
	t         testing.TB
	path      string
	recording bool
	real      http.RoundTripper

	mu   sync.Mutex
	tape []Interaction
	next int
}

// NewRecorder opens the cassette at path (a file in testdata). In replay mode a missing or
// unreadable cassette fails the test at once; in record mode the cassette is written when the
// test ends, if it passed.
func NewRecorder(t testing.TB, path string) *Recorder {
	r := &Recorder{t: t, path: path, recording: os.Getenv(RecordEnv) == "1", real: http.DefaultTransport}
	if r.recording {
		t.Cleanup(r.save)
		return r
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("llmtest: cassette: %v (record it with %s=1)", err, RecordEnv)
	}
	if err := json.Unmarshal(data, &r.tape); err != nil {
		t.Fatalf("llmtest: cassette %s: %v", path, err)
	}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.next < len(r.tape) && !t.Failed() {
			t.Errorf("llmtest: cassette %s: %d of %d interactions were not replayed; the first unused is %s %s", path, len(r.tape)-r.next, len(r.tape), r.tape[r.next].Method, r.tape[r.next].Path)
		}
	})
	return r
}

// Recording reports whether the recorder records (true) or replays.
func (r *Recorder) Recording() bool { return r.recording }

// Client is an *http.Client that goes through the recorder.
func (r *Recorder) Client() *http.Client { return &http.Client{Transport: r} }

// RoundTrip implements http.RoundTripper.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	if r.recording {
		return r.record(req, body)
	}
	return r.replay(req, body)
}

func (r *Recorder) record(req *http.Request, body []byte) (*http.Response, error) {
	resp, err := r.real.RoundTrip(req)
	if err != nil {
		return nil, err // a failed connection is not recorded: replay cannot fake a network error faithfully
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	body = redact(body)
	in := Interaction{Method: req.Method, Path: req.URL.RequestURI(), Status: resp.StatusCode, Response: string(redact(data))}
	if len(body) > 0 {
		if json.Valid(body) {
			in.Request = json.RawMessage(body)
		} else {
			in.Request, _ = json.Marshal(string(body))
		}
	}
	for _, h := range keptHeaders {
		if v := resp.Header.Get(h); v != "" {
			if in.Header == nil {
				in.Header = map[string]string{}
			}
			in.Header[h] = v
		}
	}
	r.mu.Lock()
	r.tape = append(r.tape, in)
	r.mu.Unlock()
	return resp, nil
}

func (r *Recorder) replay(req *http.Request, body []byte) (*http.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.next
	if n >= len(r.tape) {
		r.t.Errorf("llmtest: cassette %s: request %d (%s %s) but the cassette holds %d", r.path, n+1, req.Method, req.URL.Path, len(r.tape))
		return nil, fmt.Errorf("llmtest: cassette %s exhausted", r.path)
	}
	in := r.tape[n]
	r.next++
	if in.Method != req.Method || in.Path != req.URL.RequestURI() {
		r.t.Errorf("llmtest: cassette %s: request %d is %s %s; the cassette has %s %s", r.path, n+1, req.Method, req.URL.RequestURI(), in.Method, in.Path)
		return nil, fmt.Errorf("llmtest: request does not match the cassette")
	}
	if d := diffJSON(in.Request, body); d != "" {
		r.t.Errorf("llmtest: cassette %s: request %d body differs from the recording (-recorded +sent); re-record with %s=1 if the change is intended:\n%s", r.path, n+1, RecordEnv, d)
		return nil, fmt.Errorf("llmtest: request does not match the cassette")
	}
	h := http.Header{}
	for k, v := range in.Header {
		h.Set(k, v)
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", in.Status, http.StatusText(in.Status)), StatusCode: in.Status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(in.Response)), ContentLength: int64(len(in.Response)),
		Request: req,
	}, nil
}

// redact replaces the value of every *_KEY / *_TOKEN environment variable (8 characters or more)
// found in b: headers are never stored, and this catches a key echoed in a body.
func redact(b []byte) []byte {
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if len(v) >= 8 && (strings.HasSuffix(k, "_KEY") || strings.HasSuffix(k, "_TOKEN")) {
			b = bytes.ReplaceAll(b, []byte(v), []byte("REDACTED"))
		}
	}
	return b
}

func diffJSON(recorded json.RawMessage, sent []byte) string {
	if len(recorded) == 0 && len(sent) == 0 {
		return ""
	}
	var a, b any
	if json.Unmarshal(recorded, &a) != nil || json.Unmarshal(sent, &b) != nil {
		return cmp.Diff(string(recorded), string(sent))
	}
	if s, ok := a.(string); ok && !json.Valid(sent) {
		return cmp.Diff(s, string(sent))
	}
	return cmp.Diff(a, b)
}

func (r *Recorder) save() {
	if r.t.Failed() {
		r.t.Logf("llmtest: the test failed; cassette %s not written", r.path)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	data, err := json.MarshalIndent(r.tape, "", "  ")
	if err != nil {
		r.t.Errorf("llmtest: cassette %s: %v", r.path, err)
		return
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o755); err != nil {
		r.t.Errorf("llmtest: cassette: %v", err)
		return
	}
	if err := os.WriteFile(r.path, append(data, '\n'), 0o644); err != nil {
		r.t.Errorf("llmtest: cassette: %v", err)
		return
	}
	r.t.Logf("llmtest: recorded %d interactions to %s", len(r.tape), r.path)
}
