package provider

import (
	"sync"
	"testing"
)

// Dragonfly's World.save hands SaveSettings the Settings every dimension
// shares without holding their lock, while the other dimensions' ticks
// change them under it. SaveSettings must read them under that lock, or
// the race detector stops the server's tests (it did in the end-to-end
// rollback test, between the overworld's tick and the nether's autosave).
func TestSaveSettingsWhileAnotherDimensionTicks(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	defer db.Close()
	s := db.Settings()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // a dimension's tick, as world.ticker.tick does it
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			s.Lock()
			s.CurrentTick++
			s.Time++
			s.Unlock()
		}
	}()
	for i := 0; i < 20; i++ {
		db.SaveSettings(s) // another dimension's autosave
	}
	close(stop)
	wg.Wait()
}
