//go:build !linux

package restore

import "time"

// threadCPU is not measured on this platform.
func threadCPU() (time.Duration, bool) { return 0, false }
