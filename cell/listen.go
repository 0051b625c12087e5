package cell

import (
	"net"
	"strconv"
	"strings"
	"time"
)

// Listening: bind addresses as redis.conf writes them, and protected mode,
// which refuses remote clients of a server without a password.

// listenBind listens on one bind address as redis.conf writes them: "*"
// is every IPv4 address, "::*" every IPv6 one, and a leading "-" makes
// the address optional: if it cannot be bound (no IPv6 here) it is
// skipped with a nil listener instead of failing the start.
func listenBind(addr string, port int) (net.Listener, error) {
	optional := strings.HasPrefix(addr, "-")
	host := strings.TrimPrefix(addr, "-")
	switch host {
	case "*":
		host = "0.0.0.0"
	case "::*":
		host = "::"
	}
	// Each address family on its own socket, as Redis does (Go would
	// make 0.0.0.0 a dual-stack socket, and "* ::*" would then collide).
	network := "tcp"
	if ip := net.ParseIP(host); ip != nil {
		network = "tcp6"
		if ip.To4() != nil {
			network = "tcp4"
		}
	}
	ln, err := net.Listen(network, net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil && optional {
		return nil, nil
	}
	return ln, err
}

// protectedModeDenies reports whether Redis's protected mode refuses the
// client: it is on, no password is set, and the client is neither on the
// unix socket nor at 127.0.0.1 or ::1 (Redis 7.0 compares those two
// strings, so 127.0.0.2 is not local).
func (s *Server) protectedModeDenies(c *Client) bool {
	if !s.ops.protectedMode.Load() || !s.defaultUser().rules.Load().nopass || c.isUnix { // Redis: the default user needs a password
		return false
	}
	ta, ok := c.nc.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return false
	}
	ip := ta.IP.String()
	return ip != "127.0.0.1" && ip != "::1"
}

// denyProtected sends the DENIED explanation and reports that the client
// must be closed, as Redis's clientAcceptHandler does.
func (c *Client) denyProtected() bool {
	if !c.srv.protectedModeDenies(c) {
		return false
	}
	c.srv.stats.rejectedConns.Add(1)
	c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	c.nc.Write([]byte("-" + ErrProtectedMode + "\r\n"))
	return true
}

// refuseConn sends an error to a connection the server will not serve
// and closes it. It runs in a goroutine of its own and within a deadline:
// on the TLS port the write first runs the handshake, which a client
// could stall.
func refuseConn(nc net.Conn, msg string) {
	nc.SetDeadline(time.Now().Add(time.Second))
	nc.Write([]byte("-" + msg + "\r\n"))
	nc.Close()
}
