package fsutil

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// SyncedCopyTree copies the directory tree from into to, which must not
// exist (its parent must), and makes the copy durable: every file is
// fsynced, then every directory, deepest first, to last (to's entry in its
// parent is the caller's to sync). Only regular files and directories are
// copied; anything else (a symbolic link, a device) is refused with an
// error naming it, since a copy that left it out would not be whole. Files
// are streamed, so their size does not matter.
func SyncedCopyTree(from, to string) error {
	var dirs []string
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			dirs = append(dirs, target)
			return os.Mkdir(target, 0o755)
		case d.Type().IsRegular():
			return copyFileSynced(p, target)
		}
		return fmt.Errorf("copy %s: not a regular file or a directory", p)
	})
	if err != nil {
		return err
	}
	return syncDirs(dirs)
}

// copyFileSynced copies the regular file from to the new file to and
// fsyncs it.
func copyFileSynced(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", from, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("sync %s: %w", to, err)
	}
	return out.Close()
}

// SyncTree fsyncs every regular file under dir, then every directory,
// deepest first, dir last, so that what was written there survives a power
// loss once it returns (dir's entry in its parent is the caller's to sync).
// It follows no symbolic link.
func SyncTree(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			dirs = append(dirs, p)
		case d.Type().IsRegular():
			return SyncFile(vfs.Default, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return syncDirs(dirs)
}

// SyncFile fsyncs the file name through fs, opened for writing: Windows
// flushes only a file open for writing. Like every open for writing
// through vfs, it refuses a symbolic link (vfs.ErrSymlink).
func SyncFile(fs vfs.FS, name string) error {
	f, err := fs.OpenReadWrite(name)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", name, err)
	}
	return nil
}

// syncDirs fsyncs dirs, listed parents first, in the reverse order: each
// directory's entries are durable before its own entry is synced into its
// parent.
func syncDirs(dirs []string) error {
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := vfs.Default.SyncDir(dirs[i]); err != nil {
			return fmt.Errorf("sync directory %s: %w", dirs[i], err)
		}
	}
	return nil
}
