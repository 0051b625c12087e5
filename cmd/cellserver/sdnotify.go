package main

import (
	"net"
	"os"

	"github.com/cellserver/cellserver/cell"
)

// systemd readiness, as redis-server's "supervised systemd": with
// Type=notify the service manager waits for READY=1, which the server
// sends once it has loaded its data and serves, and STOPPING=1 when it
// begins to shut down. The protocol (sd_notify(3)) is one datagram of
// "KEY=value" lines to the unix socket named by NOTIFY_SOCKET ("@name" is
// an abstract socket); it is written here rather than taken from a
// library for these few lines.

// notifier sends sd_notify messages, or nothing when the server is not
// supervised by systemd.
type notifier struct{ addr string }

// newNotifier reads the supervised setting: "systemd" notifies, "auto"
// notifies when NOTIFY_SOCKET is set (as Redis detects systemd), "no"
// and "upstart" never do.
func newNotifier(cfg cell.Config) notifier {
	mode := cfg.Params["supervised"]
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" || (mode != "systemd" && mode != "auto") {
		return notifier{}
	}
	return notifier{addr}
}

// send sends state; false when there is no socket to send to. Errors are
// returned for the log: the server runs on without readiness.
func (n notifier) send(state string) (bool, error) {
	if n.addr == "" {
		return false, nil
	}
	name := n.addr
	if name[0] == '@' {
		name = "\x00" + name[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		return true, err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return true, err
}
