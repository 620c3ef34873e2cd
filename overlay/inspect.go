package overlay

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/blazeworld/blaze/provider"
)

// State is what an overlay's CURRENT says, for tools that describe an
// overlay without opening it (blaze info): a plain value, safe to copy and
// share.
type State struct {
	// Generation is the directory of the current generation, a Blaze
	// world holding the changes of the match since the last reset.
	Generation string
	// Template is the edition of the template the match began on (see
	// provider.DB.Edition); zero when the template has none (a LevelDB
	// world).
	Template provider.Edition
}

// ReadState reads the overlay in dir without opening it, changing
// nothing and taking no lock. A directory without CURRENT gives an error
// satisfying errors.Is(err, fs.ErrNotExist); a CURRENT that does not read,
// one wrapping blazedb.ErrCorrupt (or blazedb.ErrVersion), which the next
// Open answers with a reset.
func ReadState(dir string) (State, error) {
	b, err := os.ReadFile(filepath.Join(dir, currentName))
	if err != nil {
		return State{}, err
	}
	c, err := parseCurrent(b)
	if err != nil {
		return State{}, fmt.Errorf("overlay %s: %w", dir, err)
	}
	return State{Generation: filepath.Join(dir, genName(c.gen)), Template: c.template}, nil
}
