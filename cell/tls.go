package cell

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// TLS beside the plain listeners, with Redis's settings: tls-port (0: no
// TLS), tls-cert-file and tls-key-file (the server's certificate chain and
// key, PEM), tls-ca-cert-file (the CAs client certificates must chain to)
// and tls-auth-clients: yes (a client certificate is required, Redis's
// default), optional (verified when given) or no. A client on the TLS
// port is an ordinary client once its handshake is done; the handshake
// runs in the client's own goroutine, so a slow one delays nobody.

// tlsConfig builds the server's TLS configuration from the parameters, or
// nil when tls-port is 0. override, when not empty, is a parameter's new
// value ({name, value}) to use instead of the stored one.
func (s *Server) tlsConfig(override ...string) (*tls.Config, error) {
	if s.paramInt("tls-port") == 0 {
		return nil, nil
	}
	get := func(name string) string {
		if len(override) == 2 && override[0] == name {
			return override[1]
		}
		return configParamByName(name).value(s)
	}
	certFile, keyFile, caFile := get("tls-cert-file"), get("tls-key-file"), get("tls-ca-cert-file")
	if certFile == "" || keyFile == "" {
		return nil, errors.New("tls-port needs tls-cert-file and tls-key-file")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading tls-cert-file/tls-key-file: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	auth := get("tls-auth-clients")
	if auth != "no" {
		if caFile == "" {
			// Redis's own refusal, for the same reason: nothing to verify
			// client certificates against.
			return nil, errors.New(MsgTLSNoCA)
		}
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("loading tls-ca-cert-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls-ca-cert-file %s: no PEM certificate in it", caFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		if auth == "optional" {
			cfg.ClientAuth = tls.VerifyClientCertIfGiven
		}
	}
	return cfg, nil
}

// listenTLS opens the TLS listeners, one per bind address.
func (s *Server) listenTLS() ([]net.Listener, error) {
	cfg, err := s.tlsConfig()
	if err != nil || cfg == nil {
		return nil, err
	}
	s.ops.tls.Store(cfg)
	// Each handshake takes the configuration in force, so CONFIG SET of
	// the certificate files or tls-auth-clients applies to new clients.
	live := &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return s.ops.tls.Load(), nil
	}}
	cfg = live
	port := int(s.paramInt("tls-port"))
	var lns []net.Listener
	for _, b := range s.cfg.Bind {
		ln, err := listenBind(b, port)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		if ln != nil {
			lns = append(lns, &tlsListener{ln, cfg})
		}
	}
	return lns, nil
}

// tlsListener wraps accepted TCP connections in TLS after setting the
// socket options the plain listener sets.
type tlsListener struct {
	net.Listener
	cfg *tls.Config
}

func (l *tlsListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		tc.SetKeepAlive(true)
		tc.SetKeepAlivePeriod(300 * time.Second)
	}
	return tls.Server(nc, l.cfg), nil
}

// applyTLS is the CONFIG SET of a TLS file or tls-auth-clients: with TLS
// running, the configuration is rebuilt with the new value and replaces
// the old one for new clients, or the value is refused with Redis's
// text if it does not load (the reason goes to the log).
func applyTLS(name string) func(s *Server, v string) string {
	return func(s *Server, v string) string {
		if s.ops.tls.Load() != nil {
			cfg, err := s.tlsConfig(name, v)
			if err != nil {
				s.log.Warn("Failed applying new configuration", "parameter", name, "err", err)
				return MsgTLSUpdate
			}
			s.ops.tls.Store(cfg)
		}
		s.setConfigValue(name, v)
		return ""
	}
}
