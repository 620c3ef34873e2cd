package convert_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/killtest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
)

// killChildEnv, when set to "SRC\tDST", makes TestConvertKilledChild
// convert SRC to DST and stop for good at the first progress it draws,
// after the first column is written, printing "1" for killtest.
const killChildEnv = "BLAZE_CONVERT_KILL_CHILD"

// stopWriter is a progress writer that stops the conversion when it
// starts on the columns (its first line about them), saying so on stdout;
// the lines of the phases before pass.
type stopWriter struct{}

func (stopWriter) Write(p []byte) (int, error) {
	if !bytes.HasPrefix(p, []byte("converting")) {
		return len(p), nil
	}
	os.Stdout.WriteString("1\n")
	select {} // until killed
}

func TestConvertKilledChild(t *testing.T) {
	arg, ok := os.LookupEnv(killChildEnv)
	if !ok {
		t.Skip("the child of TestConvertKilled")
	}
	src, dst, _ := strings.Cut(arg, "\t")
	convert.Convert(src, dst, convert.Options{Progress: stopWriter{}})
	os.Stdout.WriteString("the conversion ended before it was killed\n")
}

// Issue 35 item 9: a conversion killed midway (SIGKILL, after its first
// column) leaves nothing at the destination that a tool or a server could
// take for a world, only its build directory beside it; the next
// conversion to the same destination deletes that and converts the whole
// world. Both directions.
func TestConvertKilled(t *testing.T) {
	if _, ok := os.LookupEnv(killChildEnv); ok {
		t.Skip("child")
	}
	ldb := worldtest.UnpackTemp(t, worldtest.Worlds(t)[1])
	bz := filepath.Join(t.TempDir(), "bz")
	want, err := convert.Convert(ldb, bz, convert.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for src, kind := range map[string]string{ldb: "blaze", bz: "leveldb"} {
		dst := filepath.Join(t.TempDir(), "out")
		cmd := exec.Command(os.Args[0], "-test.run=^TestConvertKilledChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), killChildEnv+"="+src+"\t"+dst)
		killtest.Run(t, cmd, 0)

		if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
			kind, _ := convert.Kind(dst)
			t.Fatalf("from %s: a killed conversion left %s (a %q world): %v", src, dst, kind, err)
		}
		build := dst + ".convert-tmp"
		if _, err := os.Stat(build); err != nil {
			t.Fatalf("from %s: the killed conversion's build directory: %v", src, err)
		}
		r, err := convert.Convert(src, dst, convert.Options{})
		if err != nil {
			t.Fatalf("from %s: the conversion after a killed one: %v", src, err)
		}
		if r.Columns != want.Columns || len(r.Failed) != 0 {
			t.Fatalf("from %s: %d columns converted after the kill, want %d", src, r.Columns, want.Columns)
		}
		if _, err := os.Lstat(build); !errors.Is(err, fs.ErrNotExist) || r.Leftover != build {
			t.Fatalf("from %s: %s left (%v), or not reported (%q)", src, build, err, r.Leftover)
		}
		if got, err := convert.Kind(dst); err != nil || got != kind {
			t.Fatalf("from %s: the destination is %q, want %q: %v", src, got, kind, err)
		}
	}
}

// A destination that exists empty is replaced by the world; what is in
// the way of the build directory and is not one is refused, not deleted.
func TestConvertEmptyDestinationAndForeignBuildDir(t *testing.T) {
	src := worldtest.UnpackTemp(t, worldtest.Worlds(t)[1])
	dst := t.TempDir()
	if _, err := convert.Convert(src, dst, convert.Options{}); err != nil {
		t.Fatal(err)
	}
	if !(provider.Config{}).Exists(dst) {
		t.Fatal("no Blaze world in the empty destination")
	}
	dst2 := filepath.Join(t.TempDir(), "out")
	os.WriteFile(dst2+convert.BuildSuffix, []byte("mine"), 0o644)
	if _, err := convert.Convert(src, dst2, convert.Options{}); err == nil || !strings.Contains(err.Error(), "in the way") {
		t.Fatalf("a file where the build directory goes: %v", err)
	}
	if b, err := os.ReadFile(dst2 + convert.BuildSuffix); err != nil || string(b) != "mine" {
		t.Fatal("the file in the way was changed:", err)
	}
}
