package integration_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"
)

// replyTimeout bounds the wait for one reply, so a server that hangs fails
// its test instead of the whole run.
const replyTimeout = 10 * time.Second

// A respConn is one client connection that writes commands as RESP arrays of
// bulk strings (so any byte may appear in an argument) and reads replies as
// raw bytes, without interpreting them.
type respConn struct {
	addr string
	conn net.Conn
	r    *bufio.Reader
}

func dialRESP(addr string) (*respConn, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &respConn{addr: addr, conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}, nil
}

func (c *respConn) Close() error {
	return c.conn.Close()
}

// encodeCommand writes args as a RESP array of bulk strings.
func encodeCommand(args ...string) []byte {
	b := make([]byte, 0, 16+16*len(args))
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// Send writes one command without reading its reply.
func (c *respConn) Send(args ...string) error {
	return c.WriteRaw(encodeCommand(args...))
}

// WriteRaw writes b as it is: inline commands, broken frames, pipelines.
func (c *respConn) WriteRaw(b []byte) error {
	if err := c.conn.SetWriteDeadline(time.Now().Add(replyTimeout)); err != nil {
		return err
	}
	_, err := c.conn.Write(b)
	return err
}

// ReadReply reads exactly one complete reply and returns its raw bytes.
func (c *respConn) ReadReply() ([]byte, error) {
	if err := c.conn.SetReadDeadline(time.Now().Add(replyTimeout)); err != nil {
		return nil, err
	}
	return readReply(c.r)
}

// Do sends one command and reads one reply.
func (c *respConn) Do(args ...string) ([]byte, error) {
	if err := c.Send(args...); err != nil {
		return nil, err
	}
	return c.ReadReply()
}

// ReadUntilClose reads everything the server sends until it closes the
// connection (closed is true) or stays silent for idle (closed is false).
// It gives up after replyTimeout in all.
func (c *respConn) ReadUntilClose(idle time.Duration) (data []byte, closed bool, err error) {
	end := time.Now().Add(replyTimeout)
	buf := make([]byte, 4096)
	for time.Now().Before(end) {
		if err := c.conn.SetReadDeadline(time.Now().Add(idle)); err != nil {
			return data, false, err
		}
		n, err := c.r.Read(buf)
		data = append(data, buf[:n]...)
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
			return data, true, nil
		case isTimeout(err):
			return data, false, nil
		default:
			return data, false, err
		}
	}
	return data, false, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
