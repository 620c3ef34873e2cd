package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Inside reports whether path is dir or lies under it. Both are made
// absolute and the symbolic links of their existing parts resolved first,
// and every existing ancestor of path is also compared with dir as a file
// (os.SameFile), so that neither a relative path, a link nor a filesystem
// that ignores case hides the nesting. Neither needs to exist.
func Inside(path, dir string) (bool, error) {
	p, err := resolve(path)
	if err != nil {
		return false, err
	}
	d, err := resolve(dir)
	if err != nil {
		return false, err
	}
	if rel, err := filepath.Rel(d, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return true, nil
	}
	dst, err := os.Stat(d)
	if err != nil {
		return false, nil // dir does not exist: only the names could nest
	}
	for a := p; ; a = filepath.Dir(a) {
		if st, err := os.Stat(a); err == nil && os.SameFile(st, dst) {
			return true, nil
		}
		if filepath.Dir(a) == a {
			return false, nil
		}
	}
}

// resolve returns path made absolute, with the symbolic links of its
// longest existing prefix resolved.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := ""
	for {
		r, err := filepath.EvalSymlinks(abs)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return filepath.Join(abs, rest), nil
		}
		rest = filepath.Join(filepath.Base(abs), rest)
		abs = parent
	}
}
