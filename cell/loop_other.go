//go:build !linux

package cell

import "errors"

// loopPoller exists on Linux only (loop_linux.go); elsewhere every
// connection waits in its own goroutine.
type loopPoller struct{}

func newLoopPoller() (*loopPoller, error) {
	return nil, errors.New("no event loop on this platform")
}

func (p *loopPoller) add(fd int, id int64) error { return errors.ErrUnsupported }
func (p *loopPoller) wait(ready func(id int64))  {}
func (p *loopPoller) close()                     {}
