package rawchunk

import (
	"strings"
	"testing"
	"unsafe"
)

// On the Dragonfly this module pins, the probe accepts: if an upgrade
// changes what the Builder relies on, this fails rather than cold loads
// quietly becoming slower.
func TestProbeAccepts(t *testing.T) {
	if _, err := Probe(); err != nil {
		t.Fatalf("the probe refused this Dragonfly: decodes fall back to NetworkDecode: %v", err)
	}
}

// Issue 37: the probe proves construction, not samples. A template whose
// palette has its lookup memo (Palette.last, .lastIndex) left set, as an
// upgrade that set it while decoding would leave it, made every storage
// built from it look up a value at the wrong index, and so store the wrong
// block; the probe that compared behaviour on samples accepted it.
func TestProbeRefusesAMemoLeftSet(t *testing.T) {
	for _, bits := range Bits {
		_, err := probe(func(b *Builder) {
			p := b.templates[bits].Palette()
			// Palette.last and .lastIndex lead the struct (layout checks
			// their names): a value the probe's palettes hold, at a wrong
			// index.
			*(*uint32)(unsafe.Pointer(p)) = 100
			*(*int16)(unsafe.Add(unsafe.Pointer(p), unsafe.Sizeof(uint32(0)))) = 1
		})
		if err == nil || !strings.Contains(err.Error(), "last") {
			t.Fatalf("%d bits: the probe accepted a template with its memo set: %v", bits, err)
		}
	}
}

// A template that does not hold Dragonfly's value of a field derived from
// the bits (here the index mask) is refused for that size.
func TestProbeRefusesAWrongDerivedField(t *testing.T) {
	_, err := probe(func(b *Builder) {
		s := b.templates[4]
		*(*uint32)(unsafe.Add(unsafe.Pointer(s), 4)) ^= 1 // indexMask follows two uint16s
	})
	if err == nil || !strings.Contains(err.Error(), "indexMask") {
		t.Fatalf("the probe accepted a wrong index mask: %v", err)
	}
}

// Built with blaze_safe, Get gives no Builder; without, the proved one.
func TestGet(t *testing.T) {
	b, err := Get()
	if Forced {
		if b != nil || err != nil {
			t.Fatal("blaze_safe: Get gave a Builder")
		}
		return
	}
	if b == nil || err != nil {
		t.Fatalf("Get: %v", err)
	}
}
