package server

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// web holds the dashboard: plain HTML, CSS and JS over the protocol's REST and WebSocket
// endpoints, embedded so that the binary needs nothing else and loads nothing from the net.
//
//go:embed web
var web embed.FS

func (s *Server) dashboardRoutes() {
	static, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(static)
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, static, "index.html")
	})
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", files))
}

// public reports whether a request may go without the bearer token: health, and the
// dashboard's page and assets, which hold no data (the page asks for the token).
func public(r *http.Request) bool {
	p := r.URL.Path
	return p == "/healthz" || (r.Method == http.MethodGet && (p == "/" || strings.HasPrefix(p, "/static/")))
}
