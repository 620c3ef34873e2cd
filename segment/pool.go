package segment

import (
	"errors"
	"fmt"
	"time"

	"github.com/blazeworld/blaze/blazedb"
)

// The pool: one scheduler and Workers goroutines do the background work of
// every open segment. Their errors wait in bgErr for the next call that can
// report them (Close, DeleteSegmentFor, CompactSegment).

func (p *Provider) report(err error) {
	p.conf.Log.Error("segment: "+err.Error(), "dir", p.dir)
	p.mu.Lock()
	p.bgErr = errors.Join(p.bgErr, err)
	p.mu.Unlock()
}

func (p *Provider) takeBackgroundErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.bgErr
	p.bgErr = nil
	return err
}

// scheduler hands every open segment to the pool each MaintainInterval and
// closes the idle ones that hold no pinned column.
func (p *Provider) scheduler() {
	defer p.wg.Done()
	t := time.NewTicker(p.conf.MaintainInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		p.mu.Lock()
		var idle, due []*seg
		for _, s := range p.segs {
			switch {
			case s.closing:
			case s.users == 0 && time.Since(s.lastUse) > p.conf.IdleTimeout && len(p.pins[s.key]) == 0:
				s.closing = true
				idle = append(idle, s)
			default:
				s.users++ // pinned while the pool works on it
				due = append(due, s)
			}
		}
		p.mu.Unlock()
		p.closeAll(idle, true)
		if err := p.meta.Maintain(); err != nil && !errors.Is(err, blazedb.ErrClosed) {
			p.report(fmt.Errorf("root world: %w", err))
		}
		for _, s := range due {
			select {
			case p.work <- s:
			case <-p.stop:
				p.unpin(s)
			}
		}
	}
}

func (p *Provider) worker() {
	defer p.wg.Done()
	for {
		select {
		case <-p.stop:
			return
		case s := <-p.work:
			<-s.ready
			if s.db != nil {
				if err := s.db.Maintain(); err != nil && !errors.Is(err, blazedb.ErrClosed) {
					p.report(fmt.Errorf("region %v: %w", s.key, err))
				}
			}
			p.unpin(s)
		}
	}
}
