package vfs

import "time"

// retryBudget is how long an operation that fails for a reason that passes
// (see retry) is tried again before its error is returned.
//
// On Windows another program that opens a file without FILE_SHARE_DELETE,
// as antivirus scanners and backup tools do for a moment after a file
// changes, makes a rename or removal of that file fail until it lets go.
// Half a second outlasts such a scan of a small file (SQLite waits up to
// about 1.4 s in all, the go command 2 s) while bounding what a writer held
// back by a compaction's swap can wait; a compaction that still fails is
// tried again later, and nothing is lost.
var retryBudget = 500 * time.Millisecond

// retry calls op until it succeeds, fails with an error that transient
// does not accept, or has failed for retryBudget, and returns op's last
// error. The waits between calls grow from a millisecond to 64 ms. A first
// call that succeeds or fails for good costs nothing more than op.
func retry(op func() error, transient func(error) bool) error {
	var deadline time.Time
	wait := time.Millisecond
	for {
		err := op()
		if err == nil || !transient(err) {
			return err
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(retryBudget)
		}
		left := deadline.Sub(now)
		if left <= 0 {
			return err
		}
		time.Sleep(min(wait, left))
		wait = min(2*wait, 64*time.Millisecond)
	}
}
