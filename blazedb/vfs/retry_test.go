package vfs

import (
	"errors"
	"testing"
	"time"
)

var (
	errPasses = errors.New("passes")
	errStays  = errors.New("stays")
)

func passes(err error) bool { return errors.Is(err, errPasses) }

func TestRetryWaitsOutATransientError(t *testing.T) {
	calls := 0
	err := retry(func() error {
		calls++
		if calls < 4 {
			return errPasses
		}
		return nil
	}, passes)
	if err != nil || calls != 4 {
		t.Fatalf("retry = %v after %d calls, want nil after 4", err, calls)
	}
}

func TestRetryGivesUpAtOnceOnOtherErrors(t *testing.T) {
	calls := 0
	err := retry(func() error { calls++; return errStays }, passes)
	if !errors.Is(err, errStays) || calls != 1 {
		t.Fatalf("retry = %v after %d calls, want errStays after 1", err, calls)
	}
}

func TestRetryGivesUpAfterItsBudget(t *testing.T) {
	defer func(b time.Duration) { retryBudget = b }(retryBudget)
	retryBudget = 50 * time.Millisecond
	calls := 0
	start := time.Now()
	err := retry(func() error { calls++; return errPasses }, passes)
	took := time.Since(start)
	if !errors.Is(err, errPasses) {
		t.Fatalf("retry = %v, want the last transient error", err)
	}
	if took < retryBudget || took > 20*retryBudget {
		t.Fatalf("retry gave up after %v, want about %v", took, retryBudget)
	}
	if calls < 3 {
		t.Fatalf("retry called op %d times in %v, want it tried again meanwhile", calls, took)
	}
}
