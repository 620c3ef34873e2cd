package blazedb

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Issue 38 item 9: every Durability and Compression is written as its name
// and read back as itself, through encoding.TextMarshaler and
// encoding.TextUnmarshaler (and so through encoding/json, which uses them as
// TOML decoders do); the zero values are the defaults' names.
func TestTextRoundTrip(t *testing.T) {
	durabilities := map[Durability]string{
		DurabilityBalanced: "balanced", DurabilityFast: "fast",
		DurabilitySafe: "safe", DurabilitySafeBatch: "safebatch",
	}
	for d := Durability(0); d <= DurabilitySafeBatch; d++ {
		text, err := d.MarshalText()
		if err != nil || string(text) != durabilities[d] {
			t.Fatalf("durability %d: %q, %v; want %q", uint8(d), text, err, durabilities[d])
		}
		var back Durability = DurabilitySafe + 1 - d // differs from d
		if err := back.UnmarshalText(text); err != nil || back != d {
			t.Fatalf("durability %q read back as %v, %v", text, back, err)
		}
	}
	compressions := map[Compression]string{
		CompressionDefault: "default", CompressionNone: "none", CompressionLZ4: "lz4",
		CompressionSnappy: "snappy", CompressionZstd: "zstd",
	}
	for c := Compression(0); c <= CompressionZstd; c++ {
		text, err := c.MarshalText()
		if err != nil || string(text) != compressions[c] || c.String() != compressions[c] {
			t.Fatalf("compression %d: %q, %v; want %q", uint8(c), text, err, compressions[c])
		}
		var back Compression = CompressionZstd - c + 1
		if err := back.UnmarshalText(text); err != nil || back != c {
			t.Fatalf("compression %q read back as %v, %v", text, back, err)
		}
	}

	type settings struct {
		Durability  Durability
		Compression Compression
	}
	for d := Durability(0); d <= DurabilitySafeBatch; d++ {
		for c := Compression(0); c <= CompressionZstd; c++ {
			b, err := json.Marshal(settings{d, c})
			if err != nil {
				t.Fatal(err)
			}
			want := `{"Durability":"` + durabilities[d] + `","Compression":"` + compressions[c] + `"}`
			var back settings
			if string(b) != want || json.Unmarshal(b, &back) != nil || back != (settings{d, c}) {
				t.Fatalf("json: %s read back as %+v; want %s", b, back, want)
			}
		}
	}
}

// Issue 38 item 9: a name that is not one of the modes or codecs is
// refused, never guessed at, with an error wrapping ErrInvalidOptions that
// names the text and every valid name, and the value is left as it was; a
// value outside the declared ones cannot be written out.
func TestTextRefusesUnknownNames(t *testing.T) {
	for _, s := range []string{"", "Safe", "SAFE", " safe", "safe ", "sync", "2", "safe-batch"} {
		d := DurabilityFast
		err := d.UnmarshalText([]byte(s))
		if !errors.Is(err, ErrInvalidOptions) || d != DurabilityFast {
			t.Fatalf("durability %q: %v, value %v", s, err, d)
		}
		for _, want := range []string{`"` + s + `"`, "fast", "balanced", "safe", "safebatch"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("durability %q: error %q does not name %s", s, err, want)
			}
		}
	}
	for _, s := range []string{"", "LZ4", "zstandard", "gzip", "s2", "3", "snappy "} {
		c := CompressionSnappy
		err := c.UnmarshalText([]byte(s))
		if !errors.Is(err, ErrInvalidOptions) || c != CompressionSnappy {
			t.Fatalf("compression %q: %v, value %v", s, err, c)
		}
		for _, want := range []string{`"` + s + `"`, "default", "none", "lz4", "snappy", "zstd"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("compression %q: error %q does not name %s", s, err, want)
			}
		}
	}
	if b, err := (DurabilitySafeBatch + 1).MarshalText(); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("durability %d marshalled as %q, %v", DurabilitySafeBatch+1, b, err)
	}
	if b, err := (CompressionZstd + 1).MarshalText(); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("compression %d marshalled as %q, %v", CompressionZstd+1, b, err)
	}
	if s := (CompressionZstd + 1).String(); s != "Compression(5)" {
		t.Errorf("String of an unknown compression: %q", s)
	}
}
