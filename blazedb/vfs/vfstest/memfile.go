package vfstest

import (
	"errors"
	"io"
	"os"
)

// A MemFS file: its content now, as of its last Sync, and the writes made
// since, which a crash keeps or loses one by one.

type inode struct {
	data    []byte
	synced  []byte
	pending []pendingOp // unsynced operations since the last Sync, in order
	open    int         // handles not closed
}

type pendingOp struct {
	off   int64
	data  []byte // nil for a truncate
	trunc int64
}

func resize(b []byte, n int64) []byte {
	if int64(len(b)) >= n {
		return b[:n]
	}
	return append(b, make([]byte, n-int64(len(b)))...)
}

func writeAt(b, p []byte, off int64) []byte {
	if end := off + int64(len(p)); end > int64(len(b)) {
		b = resize(b, end)
	}
	copy(b[off:], p)
	return b
}

type memFile struct {
	fs     *MemFS
	ino    *inode
	name   string
	write  bool
	closed bool
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	if off < 0 {
		return 0, errors.New("vfs: negative offset")
	}
	if off >= int64(len(f.ino.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.ino.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	if !f.write {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: os.ErrPermission}
	}
	if err := f.fs.step(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil // a pendingOp without data would be a truncate
	}
	f.ino.data = writeAt(f.ino.data, p, off)
	f.ino.pending = append(f.ino.pending, pendingOp{off: off, data: append([]byte(nil), p...)})
	return len(p), nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	if err := f.fs.step(); err != nil {
		return err
	}
	f.ino.data = resize(f.ino.data, size)
	f.ino.pending = append(f.ino.pending, pendingOp{trunc: size})
	return nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	if err := f.fs.step(); err != nil {
		return err
	}
	f.ino.synced = append(f.ino.synced[:0], f.ino.data...)
	f.ino.pending = nil
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return int64(len(f.ino.data)), nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	f.closed = true
	f.ino.open--
	return nil
}
