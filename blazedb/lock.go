package blazedb

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// Lock takes the lock of the database in dir, as a read-write Open does,
// and returns it held, for a caller that changes files beside the
// database while no process may have it open (the provider's repair of
// level.dat). It returns an error wrapping ErrLocked when a process holds
// the database. Close the lock before opening the database: Open takes it
// again.
func Lock(dir string, opts Options) (io.Closer, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	l, err := o.FS.Lock(filepath.Join(dir, lockName), true)
	if errors.Is(err, vfs.ErrLocked) {
		return nil, fmt.Errorf("blazedb: lock %s: %w (%v)", dir, ErrLocked, err)
	}
	if err != nil {
		return nil, fmt.Errorf("blazedb: lock %s: %w", dir, err)
	}
	return l, nil
}
