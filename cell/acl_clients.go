package cell

import "sync"

// What changing users does to the connections authenticated as them:
// a deleted user's connections close (Redis's
// ACLFreeUserAndKillClients), and a user whose channel permissions
// shrink loses the subscribers that no longer fit (Redis's
// ACLKillPubsubClientsIfNeeded).

// superUser is the user of the connection from this replica's master:
// Redis gives that client no user, which allows everything and which
// CLIENT LIST shows as "(superuser)".
// It is made on first use: the command table must be complete first.
var superUser = sync.OnceValue(func() *aclUser {
	u := &aclUser{name: "(superuser)"}
	u.set(defaultRules())
	return u
})

// userName is the name of c's user, for CLIENT LIST from any goroutine.
func (c *Client) userName() string {
	if u := c.shared.user.Load(); u != nil {
		return u.name
	}
	return "default"
}

// setUser makes u the client's user; only c's goroutine calls it.
func (c *Client) setUser(u *aclUser) {
	c.user = u
	c.shared.user.Store(u)
}

// disconnectUsers closes the connections of deleted users: the calling
// connection after its reply, the others at once.
func (s *Server) disconnectUsers(x *Ctx, gone []*aclUser) {
	if len(gone) == 0 {
		return
	}
	for _, u := range gone {
		u.gone.Store(true)
	}
	s.closeGoneUsers(x)
}

// killRevokedSubscribers closes u's subscribed connections whose
// channels or patterns the new rules no longer allow. Nothing is checked
// when a selector allows every channel, or when the new patterns include
// every old one.
func (s *Server) killRevokedSubscribers(x *Ctx, u *aclUser, old, rules *aclRules) {
	var upcoming []string
	for _, sel := range rules.selectors {
		if sel.allChannels {
			return
		}
		upcoming = append(upcoming, sel.channels...)
	}
	superset := true
	for _, sel := range old.selectors {
		for _, ch := range sel.channels {
			if !containsString(upcoming, ch) {
				superset = false
			}
		}
	}
	if superset {
		return
	}
	allowed := func(name string, pattern bool) bool {
		for _, p := range upcoming {
			if pattern && p == name || !pattern && globMatch([]byte(p), []byte(name)) {
				return true
			}
		}
		return false
	}
	doomed := map[*Client]bool{}
	visit := func(name string, pattern bool, sub subscriber) {
		o, ok := sub.(*outSink)
		if !ok || o.c == nil || o.c.shared.user.Load() != u || doomed[o.c] {
			return
		}
		if !allowed(name, pattern) {
			doomed[o.c] = true
		}
	}
	s.pubsub.eachSubscription(visit)
	s.spubsub.eachSubscription(visit)
	for c := range doomed {
		x.kill(c)
	}
}
