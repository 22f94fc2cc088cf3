package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/server"
)

// TestDashboardFindable drives the dashboard in a real headless Chromium: sessions are listed
// by what they are (the leading comment of their first cell) with the time of their latest
// activity, the token URL opens the latest session — not a new empty one — and its card
// carries its time.
func TestDashboardFindable(t *testing.T) {
	const token = "findable-test-token-0123456789"
	store := protocol.NewMemStore()
	seedOp(t, store, "s-old", "op-old", "% A damped oscillator, integrated with explicit Euler\nk = 4;", 2)
	time.Sleep(1100 * time.Millisecond) // a later second
	seedOp(t, store, "s-new", "op-new", "# fit the absorbance spectrum\nprint('fit')", 3)
	f := newFixture(t, store, func(c *server.Config) {
		c.Token, c.Prewarm = token, nil
		setList(c, func(context.Context) []runner.KernelInfo { return []runner.KernelInfo{{Name: "python", Version: "3"}} })
	})
	ctx := browser(t, time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/?token="+token)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the latest session opens", `location.hash === "#lab/s-new" && document.querySelectorAll("#stream article.op").length === 1`)
	if got := evalString(t, ctx, `[...document.querySelectorAll("#sessions li .name")].map((e) => e.textContent).join(" | ")`); got != "fit the absorbance spectrum | A damped oscillator, integrated with explicit Euler" {
		t.Errorf("the sessions are listed as %q, want their first cells' comments, newest first", got)
	}
	if got := evalString(t, ctx, `String(document.querySelectorAll("#sessions li").length)`); got != "2" {
		t.Errorf("%s sessions listed: opening the dashboard made a new one", got)
	}
	if got := evalString(t, ctx, `(document.querySelector("#stream article.op header time.at") || {textContent: ""}).textContent`); len(got) < 7 {
		t.Errorf("the card's time: %q", got)
	}
	if got := evalString(t, ctx, `document.querySelector("#session-name").textContent`); got != "in session fit the absorbance spectrum (s-new)" {
		t.Errorf("the session shown is named %q", got)
	}
}
