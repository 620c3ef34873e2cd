package blazedb

import (
	"strings"
	"testing"
)

// Keys round-trip through their encoding, and parseKey refuses any other
// bytes: a key the format cannot hold is damage, never a guess.
func TestParseKey(t *testing.T) {
	for _, k := range []rkey{
		{chunk: Key{Dim: 2, X: -7, Z: 1 << 30}},
		{named: true, name: "p"},
		{named: true, name: strings.Repeat("n", MaxNameLen)},
	} {
		if got, err := parseKey(k.appendTo(nil)); err != nil || got != k {
			t.Fatalf("%v parses as %v, %v", k, got, err)
		}
	}
	chunk := appendChunkKey(nil, Key{X: 1})
	for name, b := range map[string][]byte{
		"empty":                 {},
		"a name's tag alone":    {keyTagNamed},
		"a name too long":       appendNamedKey(nil, strings.Repeat("n", MaxNameLen+1)),
		"a chunk key too short": chunk[:len(chunk)-1],
		"a chunk key too long":  append(chunk, 0),
		"an unknown tag":        append([]byte{0x7f}, chunk[1:]...),
	} {
		if k, err := parseKey(b); err == nil {
			t.Errorf("%s: parsed as %v", name, k)
		}
	}
}
