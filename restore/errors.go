package restore

import "errors"

var (
	// ErrCancelled is the error of a job cancelled by Job.Cancel; a job
	// stopped by its Config.Context returns the context's error.
	ErrCancelled = errors.New("restore: cancelled")
	// ErrArea is returned by Start for an area with Min beyond Max or
	// without a dimension.
	ErrArea = errors.New("restore: invalid area")
	// ErrRange means the source column's height range is not the World's.
	ErrRange = errors.New("restore: height ranges differ")
)
