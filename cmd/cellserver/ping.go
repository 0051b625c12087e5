package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cellserver/cellserver/cell"
)

// pingMode is set by --ping: instead of serving, check that the server
// these settings describe answers PING, and exit 0 if it does. It is the
// container HEALTHCHECK, so the image needs no redis-cli:
//
//	cellserver /etc/cellserver/cellserver.conf --ping
var pingMode bool

// pingServer connects where cfg says the server listens (the unix socket,
// else the first bind address, a wildcard meaning this host, on --port),
// AUTHs with requirepass when there is one, and sends PING. A NOAUTH
// answer counts as alive: the server runs, with a password the check was
// not given. A wrong password, LOADING or no answer do not.
func pingServer(cfg cell.Config, out io.Writer) int {
	network, addr := "unix", cfg.UnixSocket
	if addr == "" {
		if cfg.Port == 0 {
			fmt.Fprintln(out, "cellserver --ping: no plain port or unix socket to ping")
			return 1
		}
		host := "127.0.0.1"
		if len(cfg.Bind) > 0 {
			host = strings.TrimPrefix(cfg.Bind[0], "-")
		}
		switch host {
		case "*", "0.0.0.0":
			host = "127.0.0.1"
		case "::*", "::":
			host = "::1"
		}
		network, addr = "tcp", net.JoinHostPort(host, strconv.Itoa(cfg.Port))
	}
	nc, err := net.DialTimeout(network, addr, 3*time.Second)
	if err != nil {
		fmt.Fprintln(out, "cellserver --ping:", err)
		return 1
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(3 * time.Second))
	br := bufio.NewReader(nc)
	send := func(args ...string) (string, error) {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		if _, err := io.WriteString(nc, b.String()); err != nil {
			return "", err
		}
		line, err := br.ReadString('\n')
		return strings.TrimRight(line, "\r\n"), err
	}
	if cfg.RequirePass != "" {
		if r, err := send("AUTH", cfg.RequirePass); err != nil || r != "+OK" {
			fmt.Fprintln(out, "cellserver --ping: AUTH:", pingFailure(r, err))
			return 1
		}
	}
	r, err := send("PING")
	switch {
	case err == nil && r == "+PONG":
		fmt.Fprintln(out, "PONG")
		return 0
	case err == nil && strings.HasPrefix(r, "-NOAUTH"):
		// The server answers; the check just lacks the password (given
		// to the server by a flag the health check does not repeat).
		fmt.Fprintln(out, "PONG (the server requires a password)")
		return 0
	}
	fmt.Fprintln(out, "cellserver --ping:", pingFailure(r, err))
	return 1
}

// pingFailure says why a reply did not count: the server's error line
// without its '-', or the connection's error.
func pingFailure(reply string, err error) string {
	if err != nil {
		return err.Error()
	}
	return strings.TrimPrefix(reply, "-")
}
