package cell

import (
	"os"
	"syscall"
	"unsafe"
)

// loopPoller is an edge-triggered epoll instance whose own readiness the
// runtime's poller watches, so that an idle loop parks like any goroutine
// (no thread blocked in epoll_wait, no entersyscall) and a busy one drains
// its events with epoll_wait's zero timeout.
type loopPoller struct {
	f      *os.File
	fd     int
	events [128]syscall.EpollEvent
}

func newLoopPoller() (*loopPoller, error) {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &loopPoller{f: os.NewFile(uintptr(fd), "eventloop"), fd: fd}, nil
}

// add watches fd for input (and its peer's end), reporting it as id.
func (p *loopPoller) add(fd int, id int64) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | -syscall.EPOLLET}
	*(*int64)(unsafe.Pointer(&ev.Fd)) = id
	return syscall.EpollCtl(p.fd, syscall.EPOLL_CTL_ADD, fd, &ev)
}

// wait calls ready for every connection with input, until close.
func (p *loopPoller) wait(ready func(id int64)) {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(func(uintptr) bool {
		for {
			n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(p.fd),
				uintptr(unsafe.Pointer(&p.events[0])), uintptr(len(p.events)), 0, 0, 0)
			if e == syscall.EINTR {
				continue
			}
			if e != 0 || n == 0 {
				return false // nothing more: park until the instance is readable
			}
			for i := range int(n) {
				ready(*(*int64)(unsafe.Pointer(&p.events[i].Fd)))
			}
			if int(n) < len(p.events) {
				return false
			}
		}
	})
}

func (p *loopPoller) close() { p.f.Close() }
