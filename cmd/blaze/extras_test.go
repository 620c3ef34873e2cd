package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/worldtest"
)

// Issue 38 item 3: info and check count the LevelDB records a converted
// world keeps for conversion back.
func TestInfoAndCheckCountLevelDBRecords(t *testing.T) {
	src := worldtest.UnpackTemp(t, worldtest.Worlds(t)[1])
	dir := filepath.Join(t.TempDir(), "w")
	r, err := convert.Convert(src, dir, convert.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ColumnRecords == 0 || r.WorldRecords == 0 {
		t.Fatalf("nothing carried: %+v", r)
	}
	info(t, dir, fmt.Sprintf(", %d of the world", r.WorldRecords), "LevelDB records kept for conversion back: with ")
	var out bytes.Buffer
	if code := runCheck(&out, nil, dir); code != exitOK {
		t.Fatalf("check: status %d: %s", code, out.String())
	}
	want := fmt.Sprintf("%d LevelDB records kept for conversion back read: %d with columns, %d of the world", r.ColumnRecords+r.WorldRecords, r.ColumnRecords, r.WorldRecords)
	if !strings.Contains(out.String(), want) {
		t.Fatalf("check says %q, not %q", out.String(), want)
	}
}
