package nbt

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// Canonical rewrites little-endian NBT so that the entries of every
// compound are sorted by name. The NBT encoder walks Go maps in random
// order, so the same block entity encodes differently from call to call;
// canonical bytes make an unchanged column encode to identical bytes, which
// is what lets an autosave of an unchanged column append nothing.
func Canonical(b []byte) ([]byte, error) {
	c := &canon{b: b}
	out, err := c.named(nil, 0)
	if err != nil {
		return nil, err
	}
	if c.off != len(b) {
		return nil, fmt.Errorf("nbt: %d trailing bytes", len(b)-c.off)
	}
	return out, nil
}

// NBT tag types.
const (
	tagEnd = iota
	tagByte
	tagShort
	tagInt
	tagLong
	tagFloat
	tagDouble
	tagByteArray
	tagString
	tagList
	tagCompound
	tagIntArray
	tagLongArray
)

const maxNBTDepth = 512

func fixedSize(t byte) int {
	switch t {
	case tagByte:
		return 1
	case tagShort:
		return 2
	case tagInt, tagFloat:
		return 4
	}
	return 8
}

type canon struct {
	b   []byte
	off int
}

func (c *canon) take(n int) ([]byte, error) {
	if n < 0 || n > len(c.b)-c.off {
		return nil, fmt.Errorf("nbt: truncated at %d", c.off)
	}
	c.off += n
	return c.b[c.off-n : c.off], nil
}

// named copies one named tag (type, name, payload) to dst.
func (c *canon) named(dst []byte, depth int) ([]byte, error) {
	t, err := c.take(1)
	if err != nil {
		return nil, err
	}
	dst = append(dst, t[0])
	if t[0] == tagEnd {
		return dst, nil
	}
	nl, err := c.take(2)
	if err != nil {
		return nil, err
	}
	name, err := c.take(int(binary.LittleEndian.Uint16(nl)))
	if err != nil {
		return nil, err
	}
	dst = append(append(dst, nl...), name...)
	return c.payload(dst, t[0], depth)
}

func (c *canon) length() (int, []byte, error) {
	l, err := c.take(4)
	if err != nil {
		return 0, nil, err
	}
	n := int32(binary.LittleEndian.Uint32(l))
	if n < 0 {
		return 0, nil, fmt.Errorf("nbt: negative length at %d", c.off)
	}
	return int(n), l, nil
}

func (c *canon) payload(dst []byte, t byte, depth int) ([]byte, error) {
	if depth > maxNBTDepth {
		return nil, fmt.Errorf("nbt: nested too deeply")
	}
	switch t {
	case tagByte, tagShort, tagInt, tagLong, tagFloat, tagDouble:
		p, err := c.take(fixedSize(t))
		return append(dst, p...), err
	case tagByteArray, tagIntArray, tagLongArray:
		n, l, err := c.length()
		if err != nil {
			return nil, err
		}
		size := 1
		if t == tagIntArray {
			size = 4
		} else if t == tagLongArray {
			size = 8
		}
		if n > (len(c.b)-c.off)/size {
			return nil, fmt.Errorf("nbt: array of %d runs past the end", n)
		}
		p, _ := c.take(n * size)
		return append(append(dst, l...), p...), nil
	case tagString:
		l, err := c.take(2)
		if err != nil {
			return nil, err
		}
		p, err := c.take(int(binary.LittleEndian.Uint16(l)))
		return append(append(dst, l...), p...), err
	case tagList:
		et, err := c.take(1)
		if err != nil {
			return nil, err
		}
		n, l, err := c.length()
		if err != nil {
			return nil, err
		}
		if n > len(c.b)-c.off {
			return nil, fmt.Errorf("nbt: list of %d runs past the end", n)
		}
		dst = append(append(dst, et...), l...)
		for i := 0; i < n; i++ {
			if dst, err = c.payload(dst, et[0], depth+1); err != nil {
				return nil, err
			}
		}
		return dst, nil
	case tagCompound:
		type ent struct {
			name string
			raw  []byte
		}
		var ents []ent
		for {
			start := c.off
			if start >= len(c.b) {
				return nil, fmt.Errorf("nbt: compound not closed")
			}
			if c.b[start] == tagEnd {
				c.off++
				break
			}
			raw, err := c.named(nil, depth+1)
			if err != nil {
				return nil, err
			}
			nl := int(binary.LittleEndian.Uint16(raw[1:]))
			ents = append(ents, ent{name: string(raw[3 : 3+nl]), raw: raw})
		}
		slices.SortFunc(ents, func(a, b ent) int { return strings.Compare(a.name, b.name) })
		for i := 1; i < len(ents); i++ {
			if ents[i].name == ents[i-1].name {
				return nil, fmt.Errorf("nbt: duplicate name %q", ents[i].name)
			}
		}
		for _, e := range ents {
			dst = append(dst, e.raw...)
		}
		return append(dst, tagEnd), nil
	}
	return nil, fmt.Errorf("nbt: unknown tag type %d", t)
}
