package cell

import (
	"sort"
)

// Publish/subscribe commands, as in Redis 7.0, sharded pub/sub included
// (outside cluster mode a shard channel is a channel of its own namespace;
// in cluster mode it routes as a key). The registry and the
// delivery are in pubsub.go; what the client may run while subscribed is
// dispatch's check (checkSubscribed), and PING's reply there is ping's.
//
// Each (un)subscription is confirmed with a reply per channel or pattern:
// the kind, the name and the client's count of channels plus patterns
// after it, an array in RESP2 and a push in RESP3.

func init() {
	const subFlags = FlagPubSub | FlagNoScript | FlagLoading | FlagStale
	doc := func(summary, since, complexity string) *CommandDoc {
		return &CommandDoc{summary, since, "pubsub", complexity}
	}
	register(
		&Command{Name: "subscribe", Arity: -2, Flags: subFlags, Handler: subscribe,
			Doc: doc("Listen for messages published to the given channels", "2.0.0", "O(N) where N is the number of channels to subscribe to.")},
		&Command{Name: "unsubscribe", Arity: -1, Flags: subFlags, Handler: unsubscribe,
			Doc: doc("Stop listening for messages posted to the given channels", "2.0.0", "O(N) where N is the number of clients already subscribed to a channel.")},
		&Command{Name: "psubscribe", Arity: -2, Flags: subFlags, Handler: psubscribe,
			Doc: doc("Listen for messages published to channels matching the given patterns", "2.0.0", "O(N) where N is the number of patterns the client is already subscribed to.")},
		&Command{Name: "punsubscribe", Arity: -1, Flags: subFlags, Handler: punsubscribe,
			Doc: doc("Stop listening for messages posted to channels matching the given patterns", "2.0.0", "O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client).")},
		&Command{Name: "ssubscribe", Arity: -2, Flags: subFlags | flagChannelKeys, Handler: ssubscribe, FirstKey: 1, LastKey: -1, KeySpecs: shardKeys(-1),
			Doc: doc("Listen for messages published to the given shard channels", "7.0.0", "O(N) where N is the number of shard channels to subscribe to.")},
		&Command{Name: "sunsubscribe", Arity: -1, Flags: subFlags | flagChannelKeys, Handler: sunsubscribe, FirstKey: 1, LastKey: -1, KeySpecs: shardKeys(-1),
			Doc: doc("Stop listening for messages posted to the given shard channels", "7.0.0", "O(N) where N is the number of clients already subscribed to a shard channel.")},
		&Command{Name: "spublish", Arity: 3, Flags: FlagPubSub | FlagLoading | FlagStale | FlagFast | FlagMayReplicate | flagChannelKeys, Handler: spublish,
			FirstKey: 1, LastKey: 1, KeySpecs: shardKeys(0),
			Doc: doc("Post a message to a shard channel", "7.0.0", "O(N) where N is the number of clients subscribed to the receiving shard channel.")},
		&Command{Name: "publish", Arity: 3, Flags: FlagPubSub | FlagLoading | FlagStale | FlagFast | FlagMayReplicate, Handler: publish,
			Doc: doc("Post a message to a channel", "2.0.0", "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).")},
		&Command{Name: "pubsub", Arity: -2, Handler: func(*Ctx) {},
			Doc: doc("A container for Pub/Sub commands", "2.8.0", "Depends on subcommand.")},
		&Command{Name: "pubsub|channels", Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, Handler: pubsubChannels,
			Doc: doc("List active channels", "2.8.0", "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)")},
		&Command{Name: "pubsub|numsub", Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, Handler: pubsubNumsub,
			Doc: doc("Get the count of subscribers for channels", "2.8.0", "O(N) for the NUMSUB subcommand, where N is the number of requested channels")},
		&Command{Name: "pubsub|numpat", Arity: 2, Flags: FlagPubSub | FlagLoading | FlagStale, Handler: pubsubNumpat,
			Doc: doc("Get the count of unique patterns pattern subscriptions", "2.8.0", "O(1)")},
		&Command{Name: "pubsub|shardchannels", Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, Handler: pubsubShardChannels,
			Doc: doc("List active shard channels", "7.0.0", "O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels).")},
		&Command{Name: "pubsub|shardnumsub", Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, Handler: pubsubShardNumsub,
			Doc: doc("Get the count of subscribers for shard channels", "7.0.0", "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels")},
		&Command{Name: "pubsub|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: pubsubHelp,
			Doc: doc("Show helpful text about the different subcommands", "6.2.0", "O(1)")},
	)
}

// shardKeys is the key spec of the sharded commands: their channels are
// keys for cluster routing (a shard channel lives in its slot), but not
// keys of the keyspace.
func shardKeys(lastKey int) []KeySpec {
	return []KeySpec{{Flags: KeyNotKey, BeginIndex: 1, LastKey: lastKey, KeyStep: 1}}
}

// subscribedOK are the commands a RESP2 client may run while subscribed,
// as in Redis's processCommand.
var subscribedOK = map[string]bool{
	"ping": true, "subscribe": true, "unsubscribe": true, "psubscribe": true, "punsubscribe": true,
	"ssubscribe": true, "sunsubscribe": true, "quit": true, "reset": true,
}

// checkSubscribed is dispatch's pub/sub check: in RESP2 a subscribed
// client's connection carries messages, so only the commands that manage
// subscriptions (and PING, QUIT, RESET) may run; RESP3 has no limits.
func (c *Client) checkSubscribed(cmd *Command) string {
	if c.w.Proto() != 2 || !c.subscribed() || subscribedOK[cmd.Name] {
		return ""
	}
	return errSubscribedContext(cmd.Name)
}

// writeSubReply is one confirmation: kind, name (nil: none) and count.
func writeSubReply(x *Ctx, kind string, name []byte, count int) {
	x.W.Push(3)
	x.W.BulkString(kind)
	if name == nil {
		x.W.Null()
	} else {
		x.W.Bulk(name)
	}
	x.W.Int(int64(count))
}

func subscribe(x *Ctx) {
	ps := x.cl.subs()
	joinChannels(x, "subscribe", ps.channels, &ps.joinedChans, ps.count)
}

// ssubscribe is SUBSCRIBE for shard channels. Redis refuses it inside
// EXEC (the client there may not block), unlike SUBSCRIBE.
func ssubscribe(x *Ctx) {
	if x != &x.cl.ctx {
		x.Error(ErrSsubscribeDenyBlocking)
		return
	}
	ps := x.cl.subs()
	joinChannels(x, "ssubscribe", ps.shards, &ps.joinedShards, func() int { return len(ps.shards) })
}

// joinChannels adds the command's channels to set, noting the new ones in
// joined for settleSubs, and confirms each with count().
func joinChannels(x *Ctx, kind string, set map[string]struct{}, joined *[]string, count func() int) {
	for _, a := range x.Args[1:] {
		ch := string(a)
		if _, ok := set[ch]; !ok {
			set[ch] = struct{}{}
			*joined = append(*joined, ch)
		}
		writeSubReply(x, kind, a, count())
	}
}

func unsubscribe(x *Ctx) {
	ps := x.cl.subs()
	leaveChannels(x, "unsubscribe", ps.channels, x.srv.pubsub, ps.count)
}

func sunsubscribe(x *Ctx) {
	ps := x.cl.subs()
	leaveChannels(x, "sunsubscribe", ps.shards, x.srv.spubsub, func() int { return len(ps.shards) })
}

// leaveChannels leaves the channels named, or all of set (in name order;
// Redis's is its hash table's). Without channels to leave, the one reply
// names none.
func leaveChannels(x *Ctx, kind string, set map[string]struct{}, reg *pubsubRegistry, count func() int) {
	c := x.cl
	names := x.Args[1:]
	if len(names) == 0 {
		if len(set) == 0 {
			writeSubReply(x, kind, nil, count())
			return
		}
		all := make([]string, 0, len(set))
		for ch := range set {
			all = append(all, ch)
		}
		sort.Strings(all)
		for _, ch := range all {
			names = append(names, []byte(ch))
		}
	}
	for _, a := range names {
		ch := string(a)
		if _, ok := set[ch]; ok {
			delete(set, ch)
			if c.out != nil {
				reg.unsubscribe(ch, c.out)
			}
		}
		writeSubReply(x, kind, a, count())
	}
}

func psubscribe(x *Ctx) {
	ps := x.cl.subs()
	for _, a := range x.Args[1:] {
		p := string(a)
		if !ps.hasPattern(p) {
			ps.patterns = append(ps.patterns, p)
			ps.joinedPats = append(ps.joinedPats, p)
		}
		writeSubReply(x, "psubscribe", a, ps.count())
	}
}

// punsubscribe leaves the patterns named, or all of them in the order
// they were subscribed.
func punsubscribe(x *Ctx) {
	c := x.cl
	ps := c.subs()
	names := x.Args[1:]
	if len(names) == 0 {
		if len(ps.patterns) == 0 {
			writeSubReply(x, "punsubscribe", nil, ps.count())
			return
		}
		for _, p := range ps.patterns {
			names = append(names, []byte(p))
		}
	}
	for _, a := range names {
		p := string(a)
		for i, q := range ps.patterns {
			if q == p {
				ps.patterns = append(ps.patterns[:i:i], ps.patterns[i+1:]...)
				if c.out != nil {
					x.srv.pubsub.punsubscribe(p, c.out)
				}
				break
			}
		}
		writeSubReply(x, "punsubscribe", a, ps.count())
	}
}

// publish delivers the message and replies with the number of deliveries.
func publish(x *Ctx) {
	if b := x.srv.bus; b != nil {
		b.Publish(x.Args[1], x.Args[2], false) // every node's subscribers hear it too
	}
	x.W.Int(x.srv.pubsub.publish(x.cl, x.Args[1], x.Args[2]))
}

// spublish is PUBLISH to a shard channel: its subscribers only, no
// patterns.
func spublish(x *Ctx) {
	if b := x.srv.bus; b != nil {
		b.Publish(x.Args[1], x.Args[2], true) // the shard's other nodes
	}
	x.W.Int(x.srv.spubsub.publish(x.cl, x.Args[1], x.Args[2]))
}

// pubsubChannels is PUBSUB CHANNELS [pattern], sorted.
func pubsubChannels(x *Ctx) { listChannels(x, x.srv.pubsub) }

// pubsubShardChannels is PUBSUB SHARDCHANNELS [pattern], sorted.
func pubsubShardChannels(x *Ctx) { listChannels(x, x.srv.spubsub) }

func listChannels(x *Ctx, reg *pubsubRegistry) {
	var pattern []byte
	switch len(x.Args) {
	case 2:
	case 3:
		pattern = x.Args[2]
	default:
		x.Error(errSubcommandSyntax(x.Args[0], x.Args[1]))
		return
	}
	chans := reg.channelList(pattern)
	x.W.Array(len(chans))
	for _, ch := range chans {
		x.W.BulkString(ch)
	}
}

func pubsubNumsub(x *Ctx) { countSubscribers(x, x.srv.pubsub) }

func pubsubShardNumsub(x *Ctx) { countSubscribers(x, x.srv.spubsub) }

// countSubscribers replies each channel named and its subscriber count.
func countSubscribers(x *Ctx, reg *pubsubRegistry) {
	x.W.Array(2 * (len(x.Args) - 2))
	for _, ch := range x.Args[2:] {
		x.W.Bulk(ch)
		x.W.Int(int64(reg.numsub(ch)))
	}
}

func pubsubNumpat(x *Ctx) { x.W.Int(x.srv.pubsub.patterns.Load()) }

func pubsubHelp(x *Ctx) {
	writeHelp(x, "PUBSUB", []string{
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
	})
}
