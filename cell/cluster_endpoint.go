package cell

import "strconv"

// The endpoint clients are sent to. cluster-preferred-endpoint-type says
// how MOVED, ASK, CLUSTER SLOTS and CLUSTER SHARDS name a node: by its IP,
// by the hostname it announces ("?" when it has none), or not at all (an
// empty host in a redirection, a null in CLUSTER SLOTS), for clients that
// reach the cluster through one address, as Redis 7.0's
// getPreferredEndpoint. CLUSTER SLOTS adds, in a map, the other names it
// has.

const (
	endpointIP       = "ip"
	endpointHostname = "hostname"
	endpointUnknown  = "unknown-endpoint"
)

// endpointType is cluster-preferred-endpoint-type.
func (s *Server) endpointType() string {
	return configParamByName("cluster-preferred-endpoint-type").value(s)
}

// preferredEndpoint is the name a node goes by under typ.
func preferredEndpoint(typ, ip, hostname string) string {
	switch typ {
	case endpointHostname:
		if hostname != "" {
			return hostname
		}
		return "?"
	case endpointUnknown:
		return ""
	}
	return ip
}

// redirectAddr is endpoint:port as -MOVED and -ASK print it.
func (s *Server) redirectAddr(n *ClusterNode) string {
	return preferredEndpoint(s.endpointType(), n.Host, n.Hostname) + ":" + strconv.Itoa(n.Port)
}

// writeSlotNode is one node of a CLUSTER SLOTS range: its endpoint, port
// and id, then a map of its other names (its IP unless that is the
// endpoint, its hostname if it has one and that is not the endpoint).
func writeSlotNode(x *Ctx, typ, ip string, port int, id, hostname string) {
	w := x.W
	w.Array(4)
	switch {
	case typ == endpointUnknown:
		w.Null()
	case typ == endpointIP && ip == "":
		w.BulkString("?")
	default:
		w.BulkString(preferredEndpoint(typ, ip, hostname))
	}
	w.Int(int64(port))
	w.BulkString(id)
	withIP, withHost := typ != endpointIP, typ != endpointHostname && hostname != ""
	n := 0
	if withIP {
		n++
	}
	if withHost {
		n++
	}
	w.Map(n)
	if withIP {
		w.BulkString("ip")
		w.BulkString(ip)
	}
	if withHost {
		w.BulkString("hostname")
		w.BulkString(hostname)
	}
}

// checkAnnouncedHostname is cluster-announce-hostname's check, with
// Redis's texts: it goes in every bus message and in redirections.
func checkAnnouncedHostname(v string) (string, string) {
	if len(v) >= 256 {
		return "", "Hostnames must be less than 256 characters"
	}
	for _, c := range []byte(v) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return "", "Hostnames may only contain alphanumeric characters, hyphens or dots"
		}
	}
	return v, ""
}
