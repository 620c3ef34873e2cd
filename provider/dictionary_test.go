package provider

import (
	"errors"
	"testing"

	"github.com/df-mc/dragonfly/server/world"
)

// FuzzLoadEntry: a persisted block dictionary entry that decodes is
// resolved against Dragonfly's registry (through its block upgrader) as a
// world's opening would, and neither step panics on any bytes; a record's
// value is an entry, the lost-entry mark (issue 35 item 4), or refused
// with ErrColumnCorrupt.
func FuzzLoadEntry(f *testing.F) {
	for _, e := range []*dictEntry{
		{Name: "minecraft:stone", States: map[string]any{}, Version: 18090528},
		{Name: "minecraft:oak_log", States: map[string]any{"pillar_axis": "y"}, Version: 18090528},
		{Name: "minecraft:water", States: map[string]any{"liquid_depth": int32(0)}},
		{Name: "plugin:unknown", States: map[string]any{"a": []any{int32(1)}, "b": map[string]any{"c": byte(2)}}},
	} {
		b, err := marshalEntry(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(lostEntry))
	br := world.DefaultBlockRegistry
	br.Finalize()
	f.Fuzz(func(t *testing.T, b []byte) {
		// A dictionary record's value: an entry, or the lost-entry mark.
		d := newDictionary()
		if err := d.add(dictPrefix+"0", b); err == nil {
			if e := d.entries[0]; e == nil || e.lost != (string(b) == lostEntry) {
				t.Fatalf("record %q read as %+v", b, e)
			}
		} else if !errors.Is(err, ErrColumnCorrupt) {
			t.Fatalf("error not wrapping ErrColumnCorrupt: %v", err)
		}
		e, err := loadEntry(b)
		if err != nil {
			return
		}
		sharedEntries.resolve(br, true, e)
	})
}
