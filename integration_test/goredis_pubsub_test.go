package integration_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisPubSub: go-redis's PubSub as applications use it, in both
// protocols: Subscribe and PSubscribe with their confirmations, messages
// read by ReceiveMessage and from Channel(), Ping on the subscribed
// connection, PUBSUB introspection, Unsubscribe and Close.
func TestGoRedisPubSub(t *testing.T) {
	forGoRedisProtocols(t, func(t *testing.T, rdb *redis.Client, tr *transcript) {
		ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
		defer cancel()
		receive := func(ps *redis.PubSub) {
			v, err := ps.ReceiveTimeout(ctx, 5*time.Second)
			tr.add("receive -> %#v err=%v", v, err)
		}
		ps := rdb.Subscribe(ctx, "gr:news", "gr:sport")
		receive(ps)
		receive(ps)
		tr.add("psubscribe err=%v", ps.PSubscribe(ctx, "gr:n*"))
		receive(ps)
		tr.cmd(rdb.Publish(ctx, "gr:news", "hello"))
		for i := 0; i < 2; i++ {
			m, err := ps.ReceiveMessage(ctx)
			tr.add("message -> %#v err=%v", m, err)
		}
		tr.add("ping err=%v", ps.Ping(ctx, "are you there"))
		receive(ps)
		tr.cmd(rdb.PubSubNumSub(ctx, "gr:news", "gr:sport", "gr:none"))
		tr.cmd(rdb.PubSubChannels(ctx, "gr:s*"))
		tr.add("unsubscribe err=%v", ps.Unsubscribe(ctx, "gr:news"))
		receive(ps)
		ch := ps.Channel()
		tr.cmd(rdb.Publish(ctx, "gr:sport", "goal"))
		tr.cmd(rdb.Publish(ctx, "gr:news", "pattern only"))
		for i := 0; i < 2; i++ {
			select {
			case m := <-ch:
				tr.add("channel -> %#v", m)
			case <-time.After(5 * time.Second):
				tr.add("channel -> nothing")
			}
		}
		tr.add("close err=%v", ps.Close())
		// A closed PubSub's connection is gone: its subscriptions end.
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if n := rdb.PubSubNumSub(ctx, "gr:sport").Val()["gr:sport"]; n == 0 {
				break
			}
		}
		tr.cmd(rdb.PubSubNumSub(ctx, "gr:sport"))
		tr.cmd(rdb.Publish(ctx, "gr:sport", "nobody"))
		tr.add("done %s", fmt.Sprint(ctx.Err()))
	})
}
