package cell

import (
	"errors"
	"io"
	"net"
	"syscall"
	"unsafe"
)

// sockIO reads and writes a plain TCP or unix socket with raw system
// calls, through the descriptor's syscall.RawConn: the runtime's poller
// still parks the goroutine when the socket would block, and deadlines and
// Close still wake it, as with net.Conn's Read and Write.
//
// Why not net.Conn's Read and Write: each goes through the runtime's
// entersyscall, and when every P was idle (at pipeline depth 1 the server
// idles between most requests) entersyscall wakes sysmon, which then polls
// every 20 µs for a millisecond or more. Measured at depth 1 with 50
// connections (bench/results/depth1.md), sysmon's wake-ups and sleeps
// took a tenth of the server's CPU. A read or write of a non-blocking
// socket never blocks, so it needs none of entersyscall's hand-off.
//
// A sockIO belongs to its connection's goroutine (reads) or to whoever
// holds the right to write the client's output (writes): the read and the
// write state are apart so that the two may run at once.
type sockIO struct {
	rc syscall.RawConn
	// The pending read: its buffer, and what the callback got.
	rp   []byte
	rn   int
	rerr error
	rfn  func(fd uintptr) bool // bound once: a call allocates nothing
	// The pending write: what is left of it, and its error.
	wp   []byte
	werr error
	wfn  func(fd uintptr) bool
	// full: the last read filled its buffer, so more may be waiting that
	// no new readiness will announce.
	full bool
	// Serve's state: body runs inside the poller's read callback on fd,
	// and meanwhile (inside) Read reads fd itself and answers
	// errWouldBlock instead of waiting.
	inside bool
	fd     uintptr
	body   func() bool
	sfn    func(fd uintptr) bool
	ofn    func(fd uintptr) bool // ServeOnce's callback, and body's answer
	left   bool
}

// errWouldBlock is Read's answer inside Serve when the socket holds
// nothing more: body returns false to wait for it.
var errWouldBlock = errors.New("cell: the socket has no more input now")

// newSockIO returns raw I/O for nc, or nil when nc is not a plain TCP or
// unix socket (TLS, a test's pipe): those keep net.Conn's Read and Write.
func newSockIO(nc net.Conn) *sockIO {
	var sc syscall.Conn
	switch c := nc.(type) {
	case *net.TCPConn:
		sc = c
	case *net.UnixConn:
		sc = c
	default:
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &sockIO{rc: rc}
	s.rfn = s.readFd
	s.wfn = s.writeFd
	s.sfn = s.serveFd
	s.ofn = s.serveOnceFd
	return s
}

// Read is net.Conn's Read: at least one byte, io.EOF at the end, or the
// poller's error (deadline, closed).
func (s *sockIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rp, s.rn, s.rerr = p, 0, nil
	if s.inside {
		got := s.readFd(s.fd)
		n, rerr := s.rn, s.rerr
		s.rp = nil
		if !got {
			return 0, errWouldBlock
		}
		return n, rerr
	}
	err := s.rc.Read(s.rfn)
	n, rerr := s.rn, s.rerr
	s.rp = nil
	if err != nil {
		return 0, err
	}
	return n, rerr
}

// readFd reads once; false asks the poller to wait for readability.
func (s *sockIO) readFd(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&s.rp[0])), uintptr(len(s.rp)))
		switch e {
		case 0:
			if n == 0 {
				s.rerr = io.EOF
			}
			s.rn = int(n)
			s.full = int(n) == len(s.rp)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		default:
			s.rerr = e
			return true
		}
	}
}

// Write is net.Conn's Write: all of p, or an error and how much went.
func (s *sockIO) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.wp, s.werr = p, nil
	err := s.rc.Write(s.wfn)
	n, werr := len(p)-len(s.wp), s.werr
	s.wp = nil
	if err != nil {
		return n, err
	}
	return n, werr
}

// writeFd writes until nothing is left (true) or the socket is full
// (false: the poller waits for writability, then calls again).
func (s *sockIO) writeFd(fd uintptr) bool {
	for len(s.wp) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&s.wp[0])), uintptr(len(s.wp)))
		switch e {
		case 0:
			s.wp = s.wp[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.werr = e
			return true
		}
	}
	return true
}

// Serve runs body inside the poller's read callback, again each time the
// socket becomes readable, until body returns true or the poller fails (a
// deadline, Close). body reads with Read, which then never waits.
//
// Why: the poller forgets that a socket became readable each time a read
// operation starts, so net.Conn's Read, and this type's, must try the
// socket before they wait; at pipeline depth 1 that try finds it empty
// after every reply, one wasted system call per request. Within one
// callback's life the poller's note is kept, so body can reply, return
// false and be called when the next request is there, with no empty read
// (bench/results/depth1.md).
//
// The cost of the callback's life: Close from another goroutine waits
// until the callback returns. body must therefore never wait for anything
// another connection may hold; see Client.servePolled.
func (s *sockIO) Serve(body func() bool) error {
	s.body = body
	err := s.rc.Read(s.sfn)
	s.body = nil
	return err
}

// ServeOnce runs body once inside the read callback, for a caller that
// waits for the socket by other means (the event loop, evloop.go): leave
// is body's answer, err the poller's (Close).
func (s *sockIO) ServeOnce(body func() bool) (leave bool, err error) {
	s.body = body
	err = s.rc.Read(s.ofn)
	s.body = nil
	return s.left, err
}

func (s *sockIO) serveOnceFd(fd uintptr) bool {
	s.inside, s.fd = true, fd
	s.left = s.body()
	s.inside = false
	return true
}

// WriteNow writes p without waiting: what went, and errWouldBlock when
// the socket took less than all of it. Only inside a read callback.
func (s *sockIO) WriteNow(p []byte) (int, error) {
	s.wp, s.werr = p, nil
	done := s.writeFd(s.fd)
	n, werr := len(p)-len(s.wp), s.werr
	s.wp = nil
	if !done {
		return n, errWouldBlock
	}
	return n, werr
}

func (s *sockIO) serveFd(fd uintptr) bool {
	s.inside, s.fd = true, fd
	leave := s.body()
	s.inside = false
	return leave
}
