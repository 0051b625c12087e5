package clusterbus

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"time"
)

// A link is one TCP connection of the bus. Each node has at most one
// outbound link (we connected, we send it PINGs and read its PONGs) and
// one inbound link (it connected to us). An inbound link learns its node
// from the first message whose sender is known. A link has a reader
// goroutine, which handles each message under the cluster's lock, and a
// writer goroutine fed by a bounded queue: a peer too slow to drain it
// loses its link, as Redis drops a link over its buffer limit.
type link struct {
	node    *Node // nil: an inbound link whose sender is not known yet
	inbound bool
	conn    net.Conn // nil while an outbound link connects
	out     chan []byte
	done    chan struct{}
	closed  bool
	created int64
	queued  int // bytes waiting, for CLUSTER LINKS
}

// linkQueue bounds the messages waiting on one link.
const linkQueue = 1024

func newLink(n *Node, inbound bool) *link {
	return &link{node: n, inbound: inbound, out: make(chan []byte, linkQueue), done: make(chan struct{}), created: now()}
}

// Start opens the bus port and starts the cron. The node table must be
// open (Open).
func (c *Cluster) Start() error {
	ln, err := net.Listen("tcp", net.JoinHostPort(c.cfg.Bind, strconv.Itoa(c.busPort())))
	if err != nil {
		return err
	}
	c.ln = ln
	c.wg.Add(2)
	go c.acceptLoop()
	go c.cronLoop()
	return nil
}

// Close stops the bus: the listener, the cron and every link.
func (c *Cluster) Close() {
	c.mu.Lock()
	select {
	case <-c.stop:
		c.mu.Unlock()
		return
	default:
	}
	close(c.stop)
	if c.ln != nil {
		c.ln.Close()
	}
	for _, n := range c.nodes {
		c.freeLink(n.link)
		c.freeLink(n.inbound)
	}
	for l := range c.inboundLinks {
		c.freeLink(l)
	}
	c.mu.Unlock()
	c.wg.Wait()
}

func (c *Cluster) acceptLoop() {
	defer c.wg.Done()
	for {
		nc, err := c.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		c.mu.Lock()
		select {
		case <-c.stop:
			c.mu.Unlock()
			nc.Close()
			return
		default:
		}
		l := newLink(nil, true)
		l.conn = nc
		c.inboundLinks[l] = struct{}{}
		c.mu.Unlock()
		go c.writeLoop(l)
		go c.readLoop(l)
	}
}

// connect opens an outbound link to n and queues first the MEET or PING
// of the handshake, as Redis's clusterLinkConnectHandler.
func (c *Cluster) connect(n *Node) {
	l := newLink(n, false)
	n.link = l
	oldPing := n.PingSent
	typ := Ping
	if n.is(FlagMeet) {
		typ = Meet
	}
	c.sendPing(l, typ)
	if oldPing != 0 {
		n.PingSent = oldPing // a reconnection does not reset the ping time
	}
	n.Flags &^= FlagMeet
	addr := net.JoinHostPort(n.IP, strconv.Itoa(n.CPort))
	timeout := time.Duration(max(c.nodeTimeout(), 1000)) * time.Millisecond
	go func() {
		nc, err := net.DialTimeout("tcp", addr, timeout)
		c.mu.Lock()
		if err != nil || l.closed {
			c.freeLink(l)
			c.mu.Unlock()
			if nc != nil {
				nc.Close()
			}
			return
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		l.conn = nc
		c.mu.Unlock()
		go c.readLoop(l)
		c.writeLoop(l)
	}()
}

// freeLink closes l and detaches it from its node. Called with the lock.
func (c *Cluster) freeLink(l *link) {
	if l == nil || l.closed {
		return
	}
	l.closed = true
	close(l.done)
	if l.conn != nil {
		l.conn.Close()
	}
	delete(c.inboundLinks, l)
	if n := l.node; n != nil {
		if n.link == l {
			n.link = nil
		}
		if n.inbound == l {
			n.inbound = nil
		}
	}
}

// send queues an encoded message on l; a full queue drops the link.
func (c *Cluster) send(l *link, m *Message) {
	if l == nil || l.closed {
		return
	}
	b := m.Append(nil)
	select {
	case l.out <- b:
		l.queued += len(b)
		if m.Type < TypeCount {
			c.statsSent[m.Type]++
		}
	default:
		c.linkBufferExceeded++
		c.freeLink(l)
	}
}

func (c *Cluster) writeLoop(l *link) {
	w := bufio.NewWriterSize(l.conn, 64<<10)
	for {
		select {
		case <-l.done:
			return
		case b := <-l.out:
			l.conn.SetWriteDeadline(time.Now().Add(time.Duration(max(c.nodeTimeout(), 1000)) * time.Millisecond))
			_, err := w.Write(b)
			n := len(b)
			for err == nil && len(l.out) > 0 {
				b = <-l.out
				n += len(b)
				_, err = w.Write(b)
			}
			if err == nil {
				err = w.Flush()
			}
			c.mu.Lock()
			l.queued -= n
			if err != nil {
				c.freeLink(l)
			}
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

func (c *Cluster) readLoop(l *link) {
	r := bufio.NewReaderSize(l.conn, 64<<10)
	var buf []byte
	for {
		b, err := Read(r, buf)
		var m *Message
		if err == nil {
			m, err = Decode(b)
		}
		c.mu.Lock()
		if err != nil || l.closed {
			if err != nil && errors.Is(err, ErrBadMessage) {
				c.cfg.Log.Warn("cluster bus: closing a link that sent a malformed message", "remote", l.conn.RemoteAddr().String(), "err", err)
			}
			c.freeLink(l)
			c.mu.Unlock()
			return
		}
		c.process(l, m)
		c.afterChange()
		c.mu.Unlock()
		buf = b[:0]
	}
}

// remoteIP is the address the peer of l connects from.
func remoteIP(l *link) string {
	if l.conn == nil {
		return ""
	}
	h, _, _ := net.SplitHostPort(l.conn.RemoteAddr().String())
	return h
}

// localIP is our address as the peer of l reached it.
func localIP(l *link) string {
	if l.conn == nil {
		return ""
	}
	h, _, _ := net.SplitHostPort(l.conn.LocalAddr().String())
	return h
}
