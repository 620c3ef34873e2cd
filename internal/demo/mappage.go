package demo

import (
	"bytes"
	"image/png"
	"net/http"
	"sync"

	"github.com/blazeworld/blaze/internal/worldmap"
	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// mapPage serves a small page at / with a top-down map of the overworld
// (/map.png, drawn by package internal/worldmap at each request) beside
// the link to /metrics. In arena mode the map is the template's with the
// match's changed chunks read from the overlay and outlined. Requests are
// served one at a time: drawing reads every column.
type mapPage struct {
	world *provider.DB      // the world, or the arena's template
	arena *overlay.Provider // nil outside arena mode
	mu    sync.Mutex
}

const pageHTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Blaze demo</title>
<style>body{font-family:sans-serif;background:#222;color:#eee}img{image-rendering:pixelated;border:1px solid #555}</style>
</head>
<body>
<h1>Blaze demo</h1>
<p>The overworld from above, north up, one pixel per block; <a href="/metrics">/metrics</a> has the figures.</p>
<img id="map" src="/map.png" alt="the map: no columns stored yet"
 onload="document.body.dataset.map = this.naturalWidth + 'x' + this.naturalHeight"
 onerror="document.body.dataset.map = 'none'">
</body>
</html>
`

func (p *mapPage) page(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(pageHTML))
}

func (p *mapPage) image(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := worldmap.New(world.Overworld, nil)
	if err := m.Add(p.world, 0); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var changed []world.ChunkPos
	if p.arena != nil {
		dirty, err := p.arena.Dirty()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for _, d := range dirty {
			if d.Dim == world.Overworld {
				changed = append(changed, d.Pos)
			}
		}
		if err := m.AddColumns(p.arena, changed, 0); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if m.Columns() == 0 {
		http.Error(w, "no columns stored yet", http.StatusNotFound)
		return
	}
	img, origin, err := m.Image()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	worldmap.Highlight(img, origin, changed)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}
