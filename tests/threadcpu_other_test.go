//go:build !linux

package tests

import "time"

// threadCPU is measured on Linux only: 0 elsewhere.
func threadCPU() time.Duration { return 0 }

// cpuTime is measured on Linux only: 0 elsewhere.
func cpuTime() time.Duration { return 0 }
