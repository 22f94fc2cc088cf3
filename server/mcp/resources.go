package mcp

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/folder"
	"github.com/labmate/labmate/memory/skillmd"
)

// Resource URIs: each active skill is labmate://skills/NAMESPACE/NAME (its SKILL.md); the
// memory export is labmate://memory/export, read as one content per exported file.
const (
	skillPrefix = "labmate://skills/"
	exportURI   = "labmate://memory/export"
)

// skillURI is the resource URI of a skill.
func skillURI(s *memory.Skill) string { return skillPrefix + s.Namespace + "/" + s.Name }

// skillResources keeps the listed skill resources in step with the store.
type skillResources struct {
	mu   sync.Mutex
	uris map[string]bool
}

func (l *Lab) addMemoryResources() {
	l.mcp.AddResource(&sdk.Resource{URI: exportURI, Name: "memory-export", Title: "Memory export",
		MIMEType:    "text/markdown",
		Description: "Every fact (facts/ID.md) and skill (skills/NAME/SKILL.md) of the memory, in every status, as the files labmate memory export writes: one content per file."},
		l.readExport)
	l.mcp.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: skillPrefix + "{+path}", Name: "skill", Title: "Skill",
		MIMEType: "text/markdown", Description: "A skill as its Agent Skills SKILL.md: labmate://skills/NAMESPACE/NAME"}, l.readSkill)
	// The skills change behind the server's back (other clients, labmate memory): the list is
	// brought up to date whenever a client asks for it.
	l.mcp.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "resources/list" {
				if err := l.syncSkills(ctx); err != nil {
					return nil, err
				}
			}
			return next(ctx, method, req)
		}
	})
}

// syncSkills lists every active skill as a resource and drops the ones no longer active.
func (l *Lab) syncSkills(ctx context.Context) error {
	l.skills.mu.Lock()
	defer l.skills.mu.Unlock()
	if l.skills.uris == nil {
		l.skills.uris = map[string]bool{}
	}
	seen := map[string]bool{}
	for r, err := range l.opts.Memory.Search(ctx, &memory.Query{Kinds: []memory.Kind{memory.KindSkill}}) {
		if err != nil {
			return fmt.Errorf("listing skills: %w", err)
		}
		s := r.Skill
		if s == nil {
			continue
		}
		uri := skillURI(s)
		seen[uri] = true
		if !l.skills.uris[uri] {
			l.mcp.AddResource(&sdk.Resource{URI: uri, Name: s.Name, Title: s.Name + " (" + s.Namespace + ")",
				Description: s.Description, MIMEType: "text/markdown"}, l.readSkill)
			l.skills.uris[uri] = true
		}
	}
	var gone []string
	for uri := range l.skills.uris {
		if !seen[uri] {
			gone = append(gone, uri)
			delete(l.skills.uris, uri)
		}
	}
	if len(gone) > 0 {
		l.mcp.RemoveResources(gone...)
	}
	return nil
}

// readSkill serves labmate://skills/NAMESPACE/NAME as the skill's SKILL.md.
func (l *Lab) readSkill(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	path, ok := strings.CutPrefix(uri, skillPrefix)
	i := strings.LastIndexByte(path, '/')
	if !ok || i <= 0 || i == len(path)-1 {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	e, err := l.opts.Memory.Get(ctx, &memory.GetParams{Namespace: path[:i], Name: path[i+1:]})
	if err != nil || e.Skill == nil {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	data, err := skillmd.Encode(e.Skill)
	if err != nil {
		return nil, fmt.Errorf("encoding skill %s: %w", uri, err)
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: string(data)}}}, nil
}

// readExport exports the memory to a scratch folder and returns its files.
func (l *Lab) readExport(ctx context.Context, _ *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	dir, err := os.MkdirTemp("", "labmate-export-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if _, err := folder.Export(ctx, l.opts.Memory, dir, nil); err != nil {
		return nil, fmt.Errorf("exporting memory: %w", err)
	}
	res := &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{}}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		res.Contents = append(res.Contents, &sdk.ResourceContents{URI: exportURI + "/" + filepath.ToSlash(rel),
			MIMEType: "text/markdown", Text: string(data)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the export: %w", err)
	}
	return res, nil
}
