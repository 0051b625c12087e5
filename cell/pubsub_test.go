package cell

import (
	"bufio"
	"fmt"
	"math/rand"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a subscriber that keeps what it receives.
type recorder struct {
	mu  sync.Mutex
	got []string // "channel payload" or "pattern channel payload"
	n   atomic.Int64
}

func (r *recorder) deliver(m *pubsubMessage) {
	s := string(m.channel) + " " + string(m.payload)
	if m.pattern != nil {
		s = string(m.pattern) + " " + s
	}
	r.mu.Lock()
	r.got = append(r.got, s)
	r.mu.Unlock()
	r.n.Add(1)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

func TestPubsubRegistry(t *testing.T) {
	type op struct {
		do      string // sub, unsub, psub, punsub, pub
		who     int
		name    string
		payload string
		want    int64 // pub's count
	}
	tests := []struct {
		name string
		ops  []op
		got  [3][]string // what each recorder received, in order
	}{
		{"channel", []op{
			{do: "sub", who: 0, name: "a"},
			{do: "sub", who: 1, name: "a"},
			{do: "sub", who: 0, name: "a"}, // twice: still one delivery
			{do: "pub", name: "a", payload: "1", want: 2},
			{do: "pub", name: "b", payload: "2", want: 0},
			{do: "unsub", who: 0, name: "a"},
			{do: "unsub", who: 2, name: "a"}, // not subscribed: nothing
			{do: "pub", name: "a", payload: "3", want: 1},
		}, [3][]string{{"a 1"}, {"a 1", "a 3"}, nil}},
		{"patterns", []op{
			{do: "psub", who: 0, name: "news.*"},
			{do: "psub", who: 0, name: "*"},
			{do: "psub", who: 1, name: "news.[ab]"},
			{do: "sub", who: 2, name: "news.a"},
			{do: "pub", name: "news.a", payload: "x", want: 4},
			{do: "pub", name: "news.c", payload: "y", want: 2},
			{do: "pub", name: "other", payload: "z", want: 1},
			{do: "punsub", who: 0, name: "*"},
			{do: "punsub", who: 0, name: "nope"},
			{do: "pub", name: "other", payload: "w", want: 0},
		}, [3][]string{
			{"news.* news.a x", "* news.a x", "news.* news.c y", "* news.c y", "* other z"},
			{"news.[ab] news.a x"},
			{"news.a x"},
		}},
		{"binary names", []op{
			{do: "sub", who: 0, name: "a\x00b"},
			{do: "psub", who: 1, name: "a\\*"},
			{do: "pub", name: "a\x00b", payload: "", want: 1},
			{do: "pub", name: "a*", payload: "p", want: 1},
			{do: "pub", name: "ab", payload: "p", want: 0},
		}, [3][]string{{"a\x00b "}, {"a\\* a* p"}, nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newPubsubRegistry(false)
			recs := [3]*recorder{{}, {}, {}}
			for _, o := range tc.ops {
				s := recs[o.who]
				switch o.do {
				case "sub":
					r.subscribe(o.name, s)
				case "unsub":
					r.unsubscribe(o.name, s)
				case "psub":
					r.psubscribe(o.name, s)
				case "punsub":
					r.punsubscribe(o.name, s)
				case "pub":
					if n := r.publish(nil, []byte(o.name), []byte(o.payload)); n != o.want {
						t.Errorf("publish %q: %d deliveries, want %d", o.name, n, o.want)
					}
				}
			}
			for i, rec := range recs {
				if got := rec.take(); fmt.Sprint(got) != fmt.Sprint(tc.got[i]) {
					t.Errorf("subscriber %d got %q, want %q", i, got, tc.got[i])
				}
			}
		})
	}
}

func TestPubsubRegistryCounts(t *testing.T) {
	r := newPubsubRegistry(false)
	a, b := &recorder{}, &recorder{}
	r.subscribe("x", a)
	r.subscribe("x", b)
	r.subscribe("y", a)
	r.psubscribe("p*", a)
	r.psubscribe("p*", b)
	r.psubscribe("q*", b)
	if n := r.channels.Load(); n != 2 {
		t.Errorf("channels %d, want 2", n)
	}
	if n := r.patterns.Load(); n != 2 {
		t.Errorf("patterns %d, want 2 (unique patterns, as NUMPAT)", n)
	}
	if n := r.numsub([]byte("x")); n != 2 {
		t.Errorf("numsub x %d, want 2", n)
	}
	if got := r.channelList(nil); strings.Join(got, ",") != "x,y" {
		t.Errorf("channels %q", got)
	}
	if got := r.channelList([]byte("y*")); strings.Join(got, ",") != "y" {
		t.Errorf("channels y* %q", got)
	}
	r.unsubscribe("x", a)
	r.unsubscribe("x", b)
	r.punsubscribe("p*", a)
	if n := r.channels.Load(); n != 1 {
		t.Errorf("channels after unsubscribing x: %d, want 1", n)
	}
	if n := r.patterns.Load(); n != 2 {
		t.Errorf("patterns after one of p*'s two left: %d, want 2", n)
	}
	r.punsubscribe("p*", b)
	r.punsubscribe("q*", b)
	if n := r.patterns.Load(); n != 0 || len(r.order) != 0 || len(r.pats) != 0 {
		t.Errorf("patterns after all left: %d (%d, %d)", n, len(r.order), len(r.pats))
	}
}

// TestPubsubRegistryConcurrent publishes from several goroutines while
// others subscribe and unsubscribe. Subscribers present throughout receive
// every message of their channel, each publisher's in its order; and the
// counts PUBLISH returns add up to the deliveries made. Run with -race.
func TestPubsubRegistryConcurrent(t *testing.T) {
	const (
		channels   = 16
		publishers = 4
		perPub     = 2000
		churners   = 4
	)
	r := newPubsubRegistry(false)
	stable := make([]*recorder, channels)
	for i := range stable {
		stable[i] = &recorder{}
		r.subscribe("ch"+strconv.Itoa(i), stable[i])
	}
	steady := &recorder{}
	r.psubscribe("ch1*", steady) // ch1, ch10..ch15
	var stop atomic.Bool
	var churned atomic.Int64
	var wg sync.WaitGroup
	churnRecs := make([]*recorder, churners)
	for g := 0; g < churners; g++ {
		churnRecs[g] = &recorder{}
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			me := churnRecs[g]
			for !stop.Load() {
				ch := "ch" + strconv.Itoa(rng.Intn(channels))
				pat := "ch" + strconv.Itoa(rng.Intn(channels)) + "*"
				r.subscribe(ch, me)
				r.psubscribe(pat, me)
				r.unsubscribe(ch, me)
				r.punsubscribe(pat, me)
				churned.Add(1)
			}
		}(g)
	}
	var total atomic.Int64
	var pubs sync.WaitGroup
	for p := 0; p < publishers; p++ {
		pubs.Add(1)
		go func(p int) {
			defer pubs.Done()
			for i := 0; i < perPub; i++ {
				ch := "ch" + strconv.Itoa((p+i)%channels)
				total.Add(r.publish(nil, []byte(ch), []byte(strconv.Itoa(p)+":"+strconv.Itoa(i))))
			}
		}(p)
	}
	pubs.Wait()
	stop.Store(true)
	wg.Wait()

	delivered := steady.n.Load()
	for _, s := range stable {
		delivered += s.n.Load()
	}
	for _, s := range churnRecs {
		delivered += s.n.Load()
	}
	if total.Load() != delivered {
		t.Errorf("PUBLISH counted %d deliveries, subscribers received %d", total.Load(), delivered)
	}
	for i, s := range stable {
		got := s.take()
		if want := publishers * perPub / channels; len(got) != want {
			t.Errorf("ch%d's subscriber got %d messages, want %d", i, len(got), want)
		}
		last := map[string]int{}
		for _, m := range got {
			_, body, _ := strings.Cut(m, " ")
			p, seq, _ := strings.Cut(body, ":")
			n, _ := strconv.Atoi(seq)
			if prev, ok := last[p]; ok && n <= prev {
				t.Fatalf("ch%d: publisher %s's message %d after %d", i, p, n, prev)
			}
			last[p] = n
		}
	}
	if want := int64(publishers * perPub / channels * 7); steady.n.Load() != want {
		t.Errorf("pattern ch1* got %d messages, want %d", steady.n.Load(), want)
	}
	if r.channels.Load() != channels || r.patterns.Load() != 1 {
		t.Errorf("after the churn: %d channels, %d patterns; want %d, 1", r.channels.Load(), r.patterns.Load(), channels)
	}
	if churned.Load() == 0 {
		t.Error("the churners never ran")
	}
}

// TestPubsubMessageEncoding: messages and pattern messages in both
// protocols, as Redis sends them.
func TestPubsubMessageEncoding(t *testing.T) {
	tests := []struct {
		m            pubsubMessage
		resp2, resp3 string
	}{
		{pubsubMessage{channel: []byte("ch"), payload: []byte("hi")},
			"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n", ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"},
		{pubsubMessage{sharded: true, channel: []byte("ch"), payload: []byte("x")},
			"*3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$1\r\nx\r\n", ">3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$1\r\nx\r\n"},
		{pubsubMessage{pattern: []byte("c*"), channel: []byte("ch"), payload: nil},
			"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$0\r\n\r\n", ">4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$0\r\n\r\n"},
	}
	for _, tc := range tests {
		m := tc.m
		if got := string(m.encoded(2)); got != tc.resp2 {
			t.Errorf("RESP2 %q, want %q", got, tc.resp2)
		}
		if got := string(m.encoded(3)); got != tc.resp3 {
			t.Errorf("RESP3 %q, want %q", got, tc.resp3)
		}
		if got := string(m.encoded(2)); got != tc.resp2 {
			t.Errorf("RESP2 again %q, want %q", got, tc.resp2)
		}
	}
}

// TestPubsubServerConcurrent runs the whole path: subscribers on their own
// connections while publishers on others publish at once and a third kind
// of connection subscribes, resets and disconnects without pause. Every
// subscriber receives every message twice (its channel and its pattern),
// each publisher's in its order, and the publishers' counts add up. Run
// with -race.
func TestPubsubServerConcurrent(t *testing.T) {
	const (
		subscribers = 4
		publishers  = 4
		perPub      = 300
		channels    = 4
		churnRounds = 200
		// patience bounds each wait for a message, against a hang; it
		// says nothing about speed.
		patience = 30 * time.Second
	)
	srv := startServer(t, nil)
	subs := make([]*testConn, subscribers)
	for i := range subs {
		c := dial(t, srv)
		c.nc.Write(encode("SUBSCRIBE", "cc:0", "cc:1", "cc:2", "cc:3"))
		for j := 0; j < channels; j++ {
			c.read()
		}
		if got := c.do("PSUBSCRIBE", "cc:*"); !strings.HasSuffix(got, ":5\r\n") {
			t.Fatalf("PSUBSCRIBE: %q", got)
		}
		subs[i] = c
	}
	var stop atomic.Bool
	var churn sync.WaitGroup
	churnErr := make(chan error, 2)
	for g := 0; g < 2; g++ {
		churn.Add(1)
		go func(g int) {
			defer churn.Done()
			// Bounded, so that a loaded machine still runs the publishers.
			for i := 0; i < churnRounds && !stop.Load(); i++ {
				nc, err := net.Dial("tcp", srv.Addrs()[0].String())
				if err != nil {
					churnErr <- err
					return
				}
				br := bufio.NewReader(nc)
				nc.Write(encode("SUBSCRIBE", "cc:1"))
				nc.Write(encode("PSUBSCRIBE", "cc:?"))
				if g == 0 {
					nc.Write(encode("RESET"))
					nc.Write(encode("PING"))
					// Confirmations, messages until RESET, +RESET, then
					// PING's plain +PONG: out of pub/sub mode.
					for reply := ""; reply != "+PONG\r\n"; {
						var sb strings.Builder
						nc.SetReadDeadline(time.Now().Add(patience))
						if err := readReply(br, &sb); err != nil {
							churnErr <- fmt.Errorf("churn after %q: %v", reply, err)
							nc.Close()
							return
						}
						reply = sb.String()
					}
				}
				nc.Close() // g == 1 leaves without a word
			}
		}(g)
	}
	var total atomic.Int64
	var pubs sync.WaitGroup
	pubErr := make(chan error, publishers)
	for p := 0; p < publishers; p++ {
		pubs.Add(1)
		go func(p int) {
			defer pubs.Done()
			nc, err := net.Dial("tcp", srv.Addrs()[0].String())
			if err != nil {
				pubErr <- err
				return
			}
			defer nc.Close()
			br := bufio.NewReader(nc)
			for i := 0; i < perPub; i++ {
				nc.Write(encode("PUBLISH", "cc:"+strconv.Itoa(i%channels), strconv.Itoa(p)+":"+strconv.Itoa(i)))
				var sb strings.Builder
				nc.SetReadDeadline(time.Now().Add(patience))
				if err := readReply(br, &sb); err != nil {
					pubErr <- err
					return
				}
				n, _ := strconv.Atoi(strings.TrimSpace(sb.String()[1:]))
				total.Add(int64(n))
			}
		}(p)
	}
	want := 2 * publishers * perPub
	for i, c := range subs {
		last := map[string]int{}
		for n := 0; n < want; n++ {
			c.nc.SetReadDeadline(time.Now().Add(patience))
			var sb strings.Builder
			if err := readReply(c.br, &sb); err != nil {
				select {
				case perr := <-pubErr:
					t.Fatalf("subscriber %d: message %d of %d: %v; a publisher failed: %v", i, n, want, err, perr)
				default:
				}
				t.Fatalf("subscriber %d: message %d of %d: %v (publishers counted %d deliveries so far)", i, n, want, err, total.Load())
			}
			reply := sb.String()
			parts := strings.Split(reply, "\r\n")
			payload := parts[len(parts)-2]
			kind := parts[2] // message or pmessage
			p, seq, _ := strings.Cut(payload, ":")
			s, _ := strconv.Atoi(seq)
			if prev, ok := last[kind+p]; ok && s <= prev {
				t.Fatalf("subscriber %d: %s %d of publisher %s after %d", i, kind, s, p, prev)
			}
			last[kind+p] = s
		}
	}
	pubs.Wait()
	stop.Store(true)
	churn.Wait()
	close(pubErr)
	close(churnErr)
	for err := range pubErr {
		t.Fatal(err)
	}
	for err := range churnErr {
		t.Fatal(err)
	}
	if min := int64(subscribers * want); total.Load() < min {
		t.Errorf("PUBLISH counted %d deliveries, fewer than the %d to the steady subscribers", total.Load(), min)
	}
	for _, c := range subs {
		if got := c.do("PING"); got != "*2\r\n$4\r\npong\r\n$0\r\n\r\n" {
			t.Errorf("PING after the messages: %q", got)
		}
	}
}

// TestPubsubConfirmedMeansJoined: a client that has read a subscription's
// confirmation is counted by the next PUBLISH, as in Redis, even when
// joining the registry lags behind queuing the confirmation (fails with
// the sink's hold in settleSubs removed).
func TestPubsubConfirmedMeansJoined(t *testing.T) {
	srv := startServer(t, nil)
	lag := func() { time.Sleep(100 * time.Millisecond) }
	testBeforeJoin.Store(&lag)
	defer testBeforeJoin.Store(nil)
	sub, pub := dial(t, srv), dial(t, srv)
	for _, tc := range []struct {
		subscribe, publish []string
		want               string
	}{
		{[]string{"SUBSCRIBE", "c1"}, []string{"PUBLISH", "c1", "m"}, ":1\r\n"},
		{[]string{"PSUBSCRIBE", "c*"}, []string{"PUBLISH", "c1", "m"}, ":2\r\n"},
		{[]string{"SSUBSCRIBE", "c2"}, []string{"SPUBLISH", "c2", "m"}, ":1\r\n"},
	} {
		sub.do(tc.subscribe...)
		r := pub.do(tc.publish...)
		if r != tc.want {
			t.Fatalf("%v right after %v was confirmed: %q, want %q", tc.publish, tc.subscribe, r, tc.want)
		}
		for n := r[1] - '0'; n > 0; n-- {
			sub.read() // the messages delivered
		}
	}
}
