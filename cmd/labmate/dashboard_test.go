package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/internal/browsertest"
)

// TestDashboardCampaign starts a Bayesian campaign on the Suzuki dataset, uploaded from the
// dashboard of a real labmate serve in a real headless Chromium, and watches it play turn by
// turn with its NMA curve drawn. (A path is refused: this server has no --data-root.)
func TestDashboardCampaign(t *testing.T) {
	_, url := serve(t, t.TempDir())
	ctx := browsertest.Start(t, 90*time.Second)
	// The URL labmate serve printed, with its token.
	v, _ := served.Load(url)
	if err := chromedp.Do(ctx, chromedp.Navigate(v.(servedInfo).dashboard+"#campaigns")); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait(t, ctx, "the campaign page shows", `shown("#page-campaigns") && !shown("#page-lab") && !document.querySelector("#nav-campaigns").hidden`)
	csv := filepath.Join(sharedData(t), "reactions", "suzuki_perera2018.csv")
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS("#camp-file"), []string{csv})); err != nil {
		t.Fatal(err)
	}
	browsertest.Eval(t, ctx, `(() => {
		document.querySelector("#camp-vars").value = "ligand, reagent, solvent";
		document.querySelector("#camp-groups").value = "reactant_1, reactant_2";
		document.querySelector("#camp-budget").value = "8";
		document.querySelector("#camp-bench").checked = true;
		return "";
	})()`)
	browsertest.Click(t, ctx, `#camp-form button[type="submit"]`)
	browsertest.Wait(t, ctx, "the campaign starts, on the bench", `shown("#camp-view") && document.querySelector("#camp-summary").textContent.startsWith("0 of 8 turns") && `+
		`document.querySelector("#camp-h").textContent.endsWith(", on the bench)")`)
	browsertest.Click(t, ctx, `#camp-play`)
	browsertest.Wait(t, ctx, "the turns arrive one by one", `(n => n >= 2 && n < 8)(document.querySelectorAll("#camp-steps tr").length)`)
	browsertest.Wait(t, ctx, "the campaign plays to the end", `document.querySelectorAll("#camp-steps tr").length === 8 && `+
		`document.querySelector("#camp-summary").textContent.includes("done") && `+
		`document.querySelector("#camp-chart polyline.nma").getAttribute("points").split(" ").length === 8`)
	browsertest.Wait(t, ctx, "the campaign is listed", `document.querySelector("#camp-list").innerText.includes("8/8")`)
	browsertest.Screenshot(t, ctx, "campaign.png")

	// The campaign is a stream of the log: the Lab lists its session, which opens the campaign.
	browsertest.Eval(t, ctx, `(() => { document.querySelector("#camp-h").textContent = ""; location.hash = "#lab"; return ""; })()`)
	// (The list is fetched again every 5 s; the dashboard's modules keep their functions to themselves.)
	browsertest.Wait(t, ctx, "the Lab lists the campaign's session", `shown("#page-lab") && [...document.querySelectorAll("#sessions .kind")].some(k => k.textContent === "campaign")`)
	browsertest.Eval(t, ctx, `([...document.querySelectorAll("#sessions button.open")].find(b => b.querySelector(".kind")?.textContent === "campaign").click(), "")`)
	browsertest.Wait(t, ctx, "its session opens the campaign", `shown("#page-campaigns") && document.querySelector("#camp-h").textContent.startsWith("Campaign on suzuki")`)

	// A CSV uploaded from the browser, played with the random planner.
	small := filepath.Join(t.TempDir(), "small.csv")
	if err := os.WriteFile(small, []byte("sub,lig,base,yield\nA,L1,B1,10\nA,L1,B2,20\nA,L2,B1,30\nA,L2,B2,40\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS("#camp-file"), []string{small})); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait(t, ctx, "the file's columns are shown", `document.querySelector("#camp-cols").textContent === "columns: sub, lig, base, yield"`)
	browsertest.Eval(t, ctx, `(() => {
		document.querySelector("#camp-path").value = "";
		document.querySelector("#camp-vars").value = "lig, base";
		document.querySelector("#camp-groups").value = "sub";
		document.querySelector("#camp-planner").value = "random";
		document.querySelector("#camp-budget").value = "4";
		document.querySelector("#camp-bench").checked = false;
		return "";
	})()`)
	browsertest.Click(t, ctx, `#camp-form button[type="submit"]`)
	browsertest.Wait(t, ctx, "the uploaded campaign starts", `document.querySelector("#camp-h").textContent === "Campaign on small · A (random)"`)
	browsertest.Click(t, ctx, `#camp-play`)
	browsertest.Wait(t, ctx, "the random planner tries all four wells and finds the best", `document.querySelectorAll("#camp-steps tr").length === 4 && `+
		`document.querySelector("#camp-summary").textContent.includes("best yield 40.00")`)

	// The campaign endpoints refuse bad input saying why.
	for _, c := range []struct {
		path, body string
		code       int
		want       string
	}{
		{"/v1/campaigns", `{"csv":"/etc/passwd","objective":"yield","vars":["a"],"budget":3}`, 400, `campaign: csv path \"/etc/passwd\" is not under a data root (--data-root); this server has none`},
		{"/v1/campaigns", `{"csv_data":"a,yield\nx,1\n","objective":"yield","vars":["a"],"budget":-1}`, 400, "budget"},
		{"/v1/campaigns", `{"csv_data":"a,yield\nx,1\n","objective":"yield","vars":["a"],"budget":3,"planner":"oracle"}`, 400, "oracle"},
		{"/v1/campaigns", `{"budget":3,"wat":1}`, 400, "wat"},
		{"/v1/campaigns/no-such/step", ``, 404, "no-such"},
		{"/v1/campaigns/no-such/step?n=0", ``, 400, "n="},
	} {
		resp, b := request(t, "POST", url, c.path, c.body)
		if resp.StatusCode != c.code || !strings.Contains(string(b), c.want) {
			t.Errorf("POST %s %s: %d %s; want %d mentioning %q", c.path, c.body, resp.StatusCode, b, c.code, c.want)
		}
	}
}
