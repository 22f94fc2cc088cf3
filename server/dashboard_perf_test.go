package server_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server"
)

// seedLines logs a completed exec operation of n printed lines in session.
func seedLines(tb testing.TB, store protocol.Store, session string, n int) {
	seedOp(tb, store, session, "op-10k", fmt.Sprintf("for i in range(%d):\n    print('line', i)", n), n)
}

// seedOp logs operation op of session: code, which printed n lines and completed.
func seedOp(tb testing.TB, store protocol.Store, session, op, code string, n int) {
	tb.Helper()
	ctx := context.Background()
	add := func(typ protocol.Type, payload any) {
		m, err := protocol.NewMessage(typ, session, op, payload)
		if err == nil {
			_, err = store.Append(ctx, m)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	add(protocol.TypeRequest, &protocol.Request{Kind: "exec", Kernel: "python", Code: code})
	add(protocol.TypeAck, &protocol.StatePayload{State: protocol.Acknowledged})
	add(protocol.TypeStart, &protocol.StatePayload{State: protocol.Started})
	for i := range n {
		add(protocol.TypeProgress, &protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsStdout, Time: time.Now(), Line: fmt.Sprint("line ", i)}})
	}
	add(protocol.TypeComplete, &protocol.Complete{Result: &protocol.Result{Status: protocol.StatusOK, DurationS: 1.5}})
}

// BenchmarkDashboard measures the dashboard in a real headless Chromium over a real server:
// its first paint (the browser's first-contentful-paint of a fresh load of the token URL) and
// the time from navigating to a session that holds a 10,000-line operation until its card
// shows the last line and how it ended (the log replayed over the WebSocket and rendered).
//
//	go test -run '^$' -bench Dashboard -benchtime 3x ./server/
func BenchmarkDashboard(b *testing.B) {
	const token = "perf-test-token-0123456789"
	lines := 10000 // LABMATE_BENCH_LINES changes it
	if n, err := strconv.Atoi(os.Getenv("LABMATE_BENCH_LINES")); err == nil && n > 0 {
		lines = n
	}
	store := protocol.NewMemStore()
	seedLines(b, store, "s-10k", lines)
	f := newFixture(b, store, func(c *server.Config) {
		c.Token, c.Prewarm = token, nil
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "python", Version: "3"}} })
	})
	ctx := browser(b, 10*time.Minute)
	wait := func(what, expr string) {
		deadline := time.Now().Add(5 * time.Minute)
		for {
			ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
			if err != nil {
				b.Fatalf("%s: %v", what, err)
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				b.Fatalf("timed out waiting until %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var paint, show time.Duration
	for i := 0; i < b.N; i++ {
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/?token="+token+"#lab/s-10k")); err != nil {
			b.Fatal(err)
		}
		wait("the 10,000 lines show", `(() => { const c = document.querySelector("#stream article.op:last-of-type"); `+
			`return !!c && c.querySelector(".out").textContent.includes("line `+strconv.Itoa(lines-1)+`\n") && c.querySelector(".end").textContent.includes("completed in"); })()`)
		show += time.Since(start)
		fcp := evalString(b, ctx, `String((performance.getEntriesByName("first-contentful-paint")[0] || {startTime: -1}).startTime)`)
		ms, err := strconv.ParseFloat(fcp, 64)
		if err != nil || ms < 0 {
			b.Fatalf("no first-contentful-paint entry: %q", fcp)
		}
		paint += time.Duration(ms * float64(time.Millisecond))
	}
	n := float64(b.N)
	b.ReportMetric(float64(paint.Milliseconds())/n, "ms-first-paint")
	b.ReportMetric(float64(show.Milliseconds())/n, "ms-show-op")
	b.ReportMetric(float64(lines), "lines")
}
