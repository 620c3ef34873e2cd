package provider

import (
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/internal/linktest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 35 item 6: the files a world replaces (level.dat, levelname.txt,
// dictionary.dat) are never written through a symbolic link found at
// their temporary names: the link goes, what it points to stays.
func TestReplacedFilesNotWrittenThroughLinks(t *testing.T) {
	dir := t.TempDir()
	p, err := Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	trap := linktest.New(t)
	names := []string{levelDatName, levelNameName, dictCopyName}
	for _, n := range names {
		trap.Put(t, n, []byte("another world's "+n))
		trap.LinkFile(t, n, filepath.Join(dir, n+vfs.TempSuffix))
	}

	p, err = Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.StoreColumn(world.ChunkPos{}, world.Overworld, worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	s := p.Settings()
	s.Name = "Renamed"
	p.SaveSettings(s)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	trap.Check(t)
	for _, n := range names {
		if linktest.IsLink(filepath.Join(dir, n)) {
			t.Errorf("%s is a link", n)
		}
	}
	p, err = Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := p.Settings().Name; got != "Renamed" {
		t.Errorf("the world's name after a reopen: %q", got)
	}
}
