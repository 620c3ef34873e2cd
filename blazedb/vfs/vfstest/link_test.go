package vfstest

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Issue 37: the test fakes of vfs are linked by tests only. When they
// lived in package vfs, every binary carried them.
func TestNoBinaryLinksVfstest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goBin, "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, "github.com/blazeworld/blaze/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err) // no toolchain beside the test binary
	}
	mains := strings.Fields(string(out))
	if len(mains) == 0 {
		t.Fatal("go list found no binary in the module")
	}
	deps, err := exec.Command(goBin, append([]string{"list", "-deps"}, mains...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const self = "github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	for _, p := range strings.Fields(string(deps)) {
		if p == self {
			t.Fatalf("a binary of %v links %s", mains, self)
		}
	}
}
