package mcp_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestArtifactResources: the files a real Python cell writes — a matplotlib PNG, a CSV, one
// whose name needs escaping — come back from exec as artifacts with resource links, are
// listed as resources, and read back as their bytes (a blob for the PNG, text for the CSV);
// a symlink to /etc/passwd, a path with .. and another session's missing file are not found.
func TestArtifactResources(t *testing.T) {
	f := newFixture(t)
	cs, _ := f.connect(t, "memory")
	ctx := context.Background()
	res := call(t, ctx, cs, "", "exec", map[string]any{"kernel": "python", "code": `import os
import matplotlib.pyplot as plt
plt.plot([1, 2, 3])
plt.savefig("fig.png")
open("my table #1.csv", "w").write("a,b\n1,2\n")
os.symlink("/etc/passwd", "passwd.txt")`})
	if res.IsError {
		t.Fatalf("exec: %s", text(res))
	}
	out := structured(t, res)
	arts, _ := out["artifacts"].([]any)
	uris := map[string]map[string]any{}
	for _, a := range arts {
		a := a.(map[string]any)
		uris[a["path"].(string)] = a
	}
	if len(uris) != 2 || uris["fig.png"] == nil || uris["my table #1.csv"] == nil {
		t.Fatalf("artifacts %v, want fig.png and my table #1.csv", arts)
	}
	var links []string
	for _, c := range res.Content {
		if l, ok := c.(*sdk.ResourceLink); ok {
			links = append(links, l.URI)
		}
	}
	png, csv := uris["fig.png"]["uri"].(string), uris["my table #1.csv"]["uri"].(string)
	if !slices.Contains(links, png) || !slices.Contains(links, csv) || !strings.Contains(text(res), "file written: fig.png (image/png, ") {
		t.Errorf("the result's links %v and text do not name the artifacts %s, %s:\n%s", links, png, csv, text(res))
	}
	if !strings.HasPrefix(png, "labmate://artifacts/") || !strings.HasSuffix(csv, "/my%20table%20%231.csv") {
		t.Errorf("URIs %s, %s", png, csv)
	}

	listed := map[string]*sdk.Resource{}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[r.URI] = r
	}
	if r := listed[png]; r == nil || r.MIMEType != "image/png" || r.Size != int64(uris["fig.png"]["size"].(float64)) {
		t.Errorf("resources/list: %v, want %s listed as image/png of its size", listed[png], png)
	}
	if listed[csv] == nil {
		t.Errorf("resources/list lacks %s", csv)
	}

	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: png})
	if err != nil {
		t.Fatal(err)
	}
	c := rr.Contents[0]
	sum := sha256.Sum256(c.Blob)
	if c.MIMEType != "image/png" || !bytes.HasPrefix(c.Blob, []byte("\x89PNG")) || hex.EncodeToString(sum[:]) != uris["fig.png"]["sha256"] {
		t.Errorf("reading %s: %s, %d bytes; want the PNG exec reported", png, c.MIMEType, len(c.Blob))
	}
	if rr, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: csv}); err != nil || rr.Contents[0].Text != "a,b\n1,2\n" || rr.Contents[0].MIMEType != "text/csv" {
		t.Errorf("reading %s: %+v, %v", csv, rr, err)
	}
	session := out["session_id"].(string)
	for _, uri := range []string{
		"labmate://artifacts/" + session + "/passwd.txt",
		"labmate://artifacts/" + session + "/../../../etc/passwd",
		"labmate://artifacts/" + session + "/%2e%2e/%2e%2e/etc/passwd",
		"labmate://artifacts/" + session + "/%2Fetc%2Fpasswd",
		"labmate://artifacts/someone-else/fig.png",
	} {
		rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err == nil {
			t.Errorf("reading %s: %+v, want not found", uri, rr.Contents)
		} else if !strings.Contains(err.Error(), "not found") {
			t.Errorf("reading %s: %v, want not found", uri, err)
		}
	}
}
