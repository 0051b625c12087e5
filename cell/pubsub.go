package cell

import (
	"hash/maphash"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cellserver/cellserver/resp"
)

// Publish/subscribe's registry: who listens to which channel and pattern.
//
// Channels are spread over pubsubShards shards by a hash of their name,
// each behind its own RWMutex, so that PUBLISH on one channel never waits
// for a subscription to an unrelated one and publishers of the same channel
// share a read lock. Patterns have to be tried against every published
// channel, so they sit in one list of their own, read-locked by PUBLISH
// only when there is at least one.
//
// Delivery happens on the publisher's goroutine: a message is appended to
// each subscriber's sink (outsink.go) under the registry's read lock, which
// costs a memory copy and no network wait. The registry knows subscribers
// only as the subscriber interface, which its tests replace.
//
// A client's own view of its subscriptions (clientSubs) belongs to its
// goroutine and is the truth for its replies (the counts in SUBSCRIBE's
// reply, subscribed mode). The registry follows it: an unsubscription leaves
// the registry at once, so no message follows the reply that confirms it; a
// subscription joins it only after the command's reply has gone to the sink
// (settleSubs), so no message precedes the confirmation, even inside an
// EXEC whose reply is not finished.

const pubsubShards = 64

// subscriber receives published messages.
type subscriber interface {
	deliver(m *pubsubMessage)
}

// pubsubRegistry is the server's channels and patterns. Sharded pub/sub
// (SSUBSCRIBE, SPUBLISH) has a registry of its own, without patterns, whose
// messages are smessages.
type pubsubRegistry struct {
	sharded bool
	seed    maphash.Seed
	shards  [pubsubShards]channelShard

	patMu sync.RWMutex
	pats  map[string]*patternSubs
	order []*patternSubs // pats in the order they were first subscribed

	channels atomic.Int64 // channels with a subscriber (INFO pubsub_channels)
	patterns atomic.Int64 // len(pats), read without the lock
}

type channelShard struct {
	mu    sync.RWMutex
	chans map[string][]subscriber // in subscription order
	_     [32]byte                // keeps neighbouring shards' locks off one cache line
}

type patternSubs struct {
	pat  []byte
	subs []subscriber
}

func newPubsubRegistry(sharded bool) *pubsubRegistry {
	r := &pubsubRegistry{sharded: sharded, seed: maphash.MakeSeed(), pats: map[string]*patternSubs{}}
	for i := range r.shards {
		r.shards[i].chans = map[string][]subscriber{}
	}
	return r
}

func (r *pubsubRegistry) shard(channel []byte) *channelShard {
	return &r.shards[maphash.Bytes(r.seed, channel)%pubsubShards]
}

// subscribe adds s to channel; a subscriber already there stays once.
func (r *pubsubRegistry) subscribe(channel string, s subscriber) {
	sh := r.shard([]byte(channel))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	subs := sh.chans[channel]
	for _, o := range subs {
		if o == s {
			return
		}
	}
	if len(subs) == 0 {
		r.channels.Add(1)
	}
	sh.chans[channel] = append(subs, s)
}

// unsubscribe removes s from channel, if it is there.
func (r *pubsubRegistry) unsubscribe(channel string, s subscriber) {
	sh := r.shard([]byte(channel))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	subs, ok := sh.chans[channel]
	if !ok {
		return
	}
	if subs = removeSubscriber(subs, s); len(subs) == 0 {
		delete(sh.chans, channel)
		r.channels.Add(-1)
		return
	}
	sh.chans[channel] = subs
}

// psubscribe adds s to pattern; a subscriber already there stays once.
func (r *pubsubRegistry) psubscribe(pattern string, s subscriber) {
	r.patMu.Lock()
	defer r.patMu.Unlock()
	p := r.pats[pattern]
	if p == nil {
		p = &patternSubs{pat: []byte(pattern)}
		r.pats[pattern] = p
		r.order = append(r.order, p)
		r.patterns.Add(1)
	}
	for _, o := range p.subs {
		if o == s {
			return
		}
	}
	p.subs = append(p.subs, s)
}

// punsubscribe removes s from pattern, if it is there.
func (r *pubsubRegistry) punsubscribe(pattern string, s subscriber) {
	r.patMu.Lock()
	defer r.patMu.Unlock()
	p := r.pats[pattern]
	if p == nil {
		return
	}
	if p.subs = removeSubscriber(p.subs, s); len(p.subs) > 0 {
		return
	}
	delete(r.pats, pattern)
	for i, o := range r.order {
		if o == p {
			r.order = append(r.order[:i:i], r.order[i+1:]...)
			break
		}
	}
	r.patterns.Add(-1)
}

// removeSubscriber drops s from subs, keeping the others' order. The
// slice is copied, so a publisher that read the old one under the read
// lock is never affected.
func removeSubscriber(subs []subscriber, s subscriber) []subscriber {
	for i, o := range subs {
		if o == s {
			out := make([]subscriber, 0, len(subs)-1)
			out = append(out, subs[:i]...)
			return append(out, subs[i+1:]...)
		}
	}
	return subs
}

// publish delivers payload to channel's subscribers, then to every
// subscription of a pattern matching it, and returns how many deliveries
// were made (PUBLISH's reply), as Redis's pubsubPublishMessage.
func (r *pubsubRegistry) publish(from *Client, channel, payload []byte) int64 {
	n := int64(0)
	sh := r.shard(channel)
	sh.mu.RLock()
	if subs := sh.chans[string(channel)]; len(subs) > 0 {
		m := &pubsubMessage{from: from, sharded: r.sharded, channel: channel, payload: payload}
		for _, s := range subs {
			s.deliver(m)
		}
		n += int64(len(subs))
	}
	sh.mu.RUnlock()
	if r.patterns.Load() == 0 {
		return n
	}
	r.patMu.RLock()
	defer r.patMu.RUnlock()
	for _, p := range r.order {
		if !globMatch(p.pat, channel) {
			continue
		}
		m := &pubsubMessage{from: from, pattern: p.pat, channel: channel, payload: payload}
		for _, s := range p.subs {
			s.deliver(m)
		}
		n += int64(len(p.subs))
	}
	return n
}

// numsub is how many clients subscribe to channel (PUBSUB NUMSUB).
func (r *pubsubRegistry) numsub(channel []byte) int {
	sh := r.shard(channel)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return len(sh.chans[string(channel)])
}

// channelList is the channels with a subscriber whose name matches pattern
// (all of them when pattern is nil), sorted (PUBSUB CHANNELS; Redis's
// order is its hash table's).
func (r *pubsubRegistry) channelList(pattern []byte) []string {
	var out []string
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.RLock()
		for ch := range sh.chans {
			if pattern == nil || globMatch(pattern, []byte(ch)) {
				out = append(out, ch)
			}
		}
		sh.mu.RUnlock()
	}
	sort.Strings(out)
	return out
}

// pubsubMessage is one delivery: a message, a pmessage when pattern is
// set, an smessage when sharded. Its encodings are made once per protocol
// and shared by the subscribers of that protocol.
type pubsubMessage struct {
	from             *Client // the publishing client; nil when unknown
	sharded          bool
	pattern          []byte
	channel, payload []byte
	enc              [2][]byte // RESP2, RESP3
}

// encoded is the message as a subscriber using proto receives it: an array
// in RESP2, a push in RESP3.
func (m *pubsubMessage) encoded(proto int) []byte {
	i := 0
	if proto == 3 {
		i = 1
	}
	if m.enc[i] == nil {
		var w resp.Writer
		w.SetProto(proto)
		if m.pattern != nil {
			w.Push(4)
			w.BulkString("pmessage")
			w.Bulk(m.pattern)
		} else {
			w.Push(3)
			if m.sharded {
				w.BulkString("smessage")
			} else {
				w.BulkString("message")
			}
		}
		w.Bulk(m.channel)
		w.Bulk(m.payload)
		m.enc[i] = w.Bytes()
	}
	return m.enc[i]
}

// deliver appends m to the sink. A message a client publishes to itself
// is written where the command is writing its reply, before it, as Redis
// does: inside EXEC's array and before EVAL's result too. The client's
// goroutine is the one running the command, and its writer holds nothing
// but this command's output (settleSubs moved the rest to the sink).
func (s *outSink) deliver(m *pubsubMessage) {
	c := s.c
	if m.from == c {
		c.w.Raw(m.encoded(c.w.Proto()))
		return
	}
	s.push(m.encoded(int(s.proto.Load())), nil)
}

// clientSubs is a client's channels, patterns and shard channels, owned by
// its goroutine.
type clientSubs struct {
	channels map[string]struct{}
	patterns []string // in subscription order, as PUNSUBSCRIBE lists them
	shards   map[string]struct{}
	// joined are the channels, patterns and shard channels subscribed by
	// the running command, which join the registries once its reply is in
	// the sink.
	joinedChans, joinedPats, joinedShards []string
}

// count is (UN)SUBSCRIBE's and P(UN)SUBSCRIBE's count: channels and
// patterns. S(UN)SUBSCRIBE count shard channels alone.
func (ps *clientSubs) count() int { return len(ps.channels) + len(ps.patterns) }

// total is every subscription: the client is in pub/sub mode while it is
// not 0.
func (ps *clientSubs) total() int { return ps.count() + len(ps.shards) }

func (ps *clientSubs) hasPattern(p string) bool {
	for _, q := range ps.patterns {
		if q == p {
			return true
		}
	}
	return false
}

// subs is c's subscription state, made on first use.
func (c *Client) subs() *clientSubs {
	if c.ps == nil {
		c.ps = &clientSubs{channels: map[string]struct{}{}, shards: map[string]struct{}{}}
	}
	return c.ps
}

// subscribed reports whether c is in Redis's pub/sub mode (CLIENT_PUBSUB):
// it has at least one channel or pattern. For c's own goroutine.
func (c *Client) subscribed() bool { return c.ps != nil && c.ps.total() > 0 }

// settleSubs runs after each command of a client that has used pub/sub:
// the reply joins the sink (made on the first subscription), held there
// until the new subscriptions have joined the registry. A client left
// with none leaves pub/sub mode and its sink.
func (c *Client) settleSubs() {
	ps := c.ps
	n := ps.total()
	if n > 0 {
		if c.srv.fsyncAlways.Load() && !c.waitDurable() {
			c.w.Reset()
			c.nc.Close()
			return
		}
		s := c.attachSink()
		s.proto.Store(int32(c.w.Proto()))
		if len(ps.joinedChans)+len(ps.joinedPats)+len(ps.joinedShards) > 0 {
			s.hold() // the confirmations go out once the channels are joined
			defer s.release()
		}
		s.push(c.w.Bytes(), nil)
		c.w.Reset()
	}
	// The class of the output limits first: the registry may deliver as
	// soon as a subscription joins.
	setClientFlag(&c.shared.flags, cflagPubSub, n > 0)
	if f := testBeforeJoin.Load(); f != nil {
		(*f)()
	}
	reg := c.srv.pubsub
	for _, ch := range ps.joinedChans {
		if _, ok := ps.channels[ch]; ok {
			reg.subscribe(ch, c.out)
		}
	}
	for _, p := range ps.joinedPats {
		if ps.hasPattern(p) {
			reg.psubscribe(p, c.out)
		}
	}
	for _, ch := range ps.joinedShards {
		if _, ok := ps.shards[ch]; ok {
			c.srv.spubsub.subscribe(ch, c.out)
		}
	}
	ps.joinedChans, ps.joinedPats, ps.joinedShards = ps.joinedChans[:0], ps.joinedPats[:0], ps.joinedShards[:0]
	storeIfChanged(&c.shared.sub, int32(len(ps.channels)))
	storeIfChanged(&c.shared.psub, int32(len(ps.patterns)))
	storeIfChanged(&c.shared.ssub, int32(len(ps.shards)))
	if n == 0 {
		c.ps = nil
		c.releaseSink()
	}
}

// testBeforeJoin, set only by tests, runs in settleSubs between queuing
// the confirmations and joining the registry.
var testBeforeJoin atomic.Pointer[func()]

// dropSubs ends every subscription without replies (RESET, disconnect).
func (c *Client) dropSubs() {
	ps := c.ps
	if ps == nil {
		return
	}
	reg := c.srv.pubsub
	for ch := range ps.channels {
		if c.out != nil {
			reg.unsubscribe(ch, c.out)
		}
		delete(ps.channels, ch)
	}
	for _, p := range ps.patterns {
		if c.out != nil {
			reg.punsubscribe(p, c.out)
		}
	}
	ps.patterns = nil
	for ch := range ps.shards {
		if c.out != nil {
			c.srv.spubsub.unsubscribe(ch, c.out)
		}
		delete(ps.shards, ch)
	}
	ps.joinedChans, ps.joinedPats, ps.joinedShards = ps.joinedChans[:0], ps.joinedPats[:0], ps.joinedShards[:0]
}

// eachSubscription calls fn for every channel and pattern subscription,
// under the registry's locks (fn must not subscribe or publish).
func (r *pubsubRegistry) eachSubscription(fn func(name string, pattern bool, s subscriber)) {
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.RLock()
		for ch, subs := range sh.chans {
			for _, s := range subs {
				fn(ch, false, s)
			}
		}
		sh.mu.RUnlock()
	}
	r.patMu.RLock()
	for p, ps := range r.pats {
		for _, s := range ps.subs {
			fn(p, true, s)
		}
	}
	r.patMu.RUnlock()
}
