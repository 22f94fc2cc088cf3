package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"github.com/labmate/labmate/runner"

	"github.com/labmate/labmate/agent"
	agentsqlite "github.com/labmate/labmate/agent/sqlite"
	"github.com/labmate/labmate/artifact"
	"github.com/labmate/labmate/kernel"
	ksqlite "github.com/labmate/labmate/knowledge/sqlite"
	labsqlite "github.com/labmate/labmate/lab/sqlite"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/sandbox"
	"github.com/labmate/labmate/server"
)

// serverConfig is the protocol server's configuration shared by serve and mcp.
func serverConfig(store protocol.Store, sb *sandbox.Sandbox, workspaces string, prewarm []string) server.Config {
	return server.Config{Config: runner.Config{Store: store, Workspaces: filepath.Clean(workspaces), Prewarm: prewarm,
		Kernels: sandboxed{sb}}}
}

// checkPrewarm refuses a --prewarm kernel labmate does not know, before the server starts.
func checkPrewarm(prewarm []string) error {
	for _, k := range prewarm {
		if _, err := findKernel(k); err != nil {
			return fmt.Errorf("--prewarm: %w", err)
		}
	}
	return nil
}

// sandboxed are the kernels, started in a sandbox (runner.Kernels).
type sandboxed struct{ sb kernel.Sandbox }

func (k sandboxed) Start(ctx context.Context, name, workspace string) (kernel.Kernel, error) {
	return startKernel(ctx, name, k.sb, workspace)
}

func (sandboxed) List(ctx context.Context) []runner.KernelInfo { return kernelInfos(ctx) }

// kernelInfos lists the kernels with their interpreter versions.
func kernelInfos(ctx context.Context) []runner.KernelInfo {
	rows := make([]runner.KernelInfo, len(kernels))
	var wg sync.WaitGroup
	for i, k := range kernels {
		wg.Go(func() {
			rows[i].Name = k.name
			v, err := k.version(ctx)
			rows[i].Version = v
			if err != nil {
				rows[i].Error = err.Error()
			}
		})
	}
	wg.Wait()
	return rows
}

// memoryPath is the memory labmate memory uses: $LABMATE_MEMORY (a SQLite file or a
// postgres:// URL), else DATA/memory.db.
func memoryPath(data string) string {
	return cmp.Or(os.Getenv("LABMATE_MEMORY"), filepath.Join(data, "memory.db"))
}

// openStores opens, in one place, the stores labmate serve and labmate mcp share under DATA
// beside the log: the memory (memoryPath) and the documentation index labmate docs writes
// ($LABMATE_DOCS_DB, else DATA/docs.db). It returns them for the MCP tools and agent runs, and
// closes both with done.
func openStores(ctx context.Context, data string) (mem memory.Store, docs *ksqlite.Index, done func(), err error) {
	if mem, err = (&memoryFlags{store: memoryPath(data)}).open(ctx); err != nil {
		return nil, nil, nil, err
	}
	docsPath := cmp.Or(os.Getenv("LABMATE_DOCS_DB"), filepath.Join(data, "docs.db"))
	docs, err = ksqlite.Open(docsPath, nil)
	if errors.Is(err, ksqlite.ErrOldIndex) { // kept aside: the server starts with an empty index
		old := docsPath + ".old"
		if err = os.Rename(docsPath, old); err == nil {
			fmt.Fprintf(os.Stderr, "labmate: %s was built by an earlier labmate: moved to %s; index the documents again (labmate docs index --octave, --python MODULE…, PATH…)\n", docsPath, old)
			docs, err = ksqlite.Open(docsPath, nil)
		}
	}
	if err != nil {
		mem.Close()
		return nil, nil, nil, err
	}
	return mem, docs, func() { docs.Close(); mem.Close() }, nil
}

// importOld imports into log, once, the stores an earlier labmate kept beside it in data —
// the agent runs' checkpoints (runs.db) and the campaigns (campaigns.db) — and retires them
// (renamed FILE.imported, with a note), saying so on w. A file that cannot be imported is
// kept, said on w, and tried again by the next command.
func importOld(ctx context.Context, data string, log protocol.Store, w io.Writer) {
	if n, err := agentsqlite.Import(ctx, data, agent.NewCheckpoints(log)); err != nil {
		fmt.Fprintf(w, "labmate: %v\n", err)
	} else if n > 0 {
		fmt.Fprintf(w, "labmate: imported %d agent runs of %s into the log; the file is kept as %[2]s.imported\n", n, filepath.Join(data, agentsqlite.File))
	}
	if n, err := labsqlite.Import(ctx, data, log); err != nil {
		fmt.Fprintf(w, "labmate: %v\n", err)
	} else if n > 0 {
		fmt.Fprintf(w, "labmate: imported %d campaigns of %s into the log; the file is kept as %[2]s.imported\n", n, filepath.Join(data, labsqlite.File))
	}
}

// redact hides the password of a postgres:// URL in what is printed.
func redact(store string) string {
	if u, err := url.Parse(store); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return store
}

// openArtifacts opens the artifact store of data directory data, of size max ("2GiB").
func openArtifacts(data, max string) (*artifact.Store, error) {
	n, err := sandbox.ParseSize(max)
	if err != nil || n <= 0 {
		return nil, fmt.Errorf("--artifacts-max %q: want a size such as 512MiB or 2GiB", max)
	}
	return artifact.Open(filepath.Join(data, "artifacts"), &artifact.Options{MaxBytes: n})
}
