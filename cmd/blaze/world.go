package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
)

// databases returns the databases of the Blaze world in dir: the world's
// own, then its regions' when it is segmented. It refuses a directory
// that holds no Blaze world, where opening would make a new one.
func databases(dir string) ([]string, error) {
	if err := oneWorld(dir); err != nil {
		return nil, err
	}
	if !(provider.Config{}).Exists(dir) {
		if kind, _ := convert.Kind(dir); kind == "leveldb" {
			return nil, fmt.Errorf("%s is a LevelDB world, not a Blaze one: blaze convert makes a Blaze world of it", dir)
		}
		return nil, fmt.Errorf("%s is not a Blaze world", dir)
	}
	regions, err := segment.Regions(dir)
	if err != nil {
		return nil, err
	}
	return append([]string{dir}, regions...), nil
}

// oneWorld refuses a directory that holds both a LevelDB world (db/) and
// a Blaze one (blaze/): which one is meant is unclear, and convert would
// read the other (convert.ErrAmbiguousWorld).
func oneWorld(dir string) error {
	if _, err := convert.Kind(dir); errors.Is(err, convert.ErrAmbiguousWorld) {
		return err
	}
	return nil
}

// failed reports the error that stopped the command cmd and returns the
// exit status for it.
func failed(cmd string, err error) int {
	if errors.Is(err, blazedb.ErrLocked) {
		err = fmt.Errorf("%w (is a server running it?)", err)
	}
	fmt.Fprintf(os.Stderr, "blaze %s: %v\n", cmd, err)
	return exitFailed
}

// count says n things in words: "1 column", "2 columns".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
