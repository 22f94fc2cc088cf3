package mcp

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/knowledge/tools"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/tool"
)

// addDocsTools serves the agent's search_docs (knowledge/tools) as docs_search, the name MCP
// clients know it by.
func (l *Lab) addDocsTools() {
	l.addTool(renamed{Tool: tools.Docs(l.opts.Docs), name: "docs_search"}, &sdk.ToolAnnotations{ReadOnlyHint: true})
}

// renamed is a tool served under another name.
type renamed struct {
	tool.Tool
	name string
}

func (r renamed) Spec() llm.ToolSpec {
	s := r.Tool.Spec()
	s.Name = r.name
	return s
}
