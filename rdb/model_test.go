package rdb

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A keyspace as the tests build and compare it: the value each key must
// have, whichever side wrote or read it.

type modelKey struct {
	db     int
	key    string
	v      Value
	expire int64 // unix ms, 0 none
}

type model map[string]modelKey // by db and key

func mkey(db int, key string) string { return strconv.Itoa(db) + "\x00" + key }

func (m model) add(db int, key string, v Value, expire int64) {
	m[mkey(db, key)] = modelKey{db, key, v, expire}
}

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// canonical is a value's content in a comparable form: sets and hashes
// sorted, sorted sets by member with exact scores.
func canonical(v Value) string {
	var parts []string
	switch v.Type {
	case TypeString:
		return "string:" + strconv.Quote(string(v.Str))
	case TypeList:
		for _, e := range v.Elems {
			parts = append(parts, strconv.Quote(string(e)))
		}
		return "list:" + strings.Join(parts, ",")
	case TypeSet:
		for _, e := range v.Elems {
			parts = append(parts, strconv.Quote(string(e)))
		}
	case TypeHash:
		for i := 0; i+1 < len(v.Elems); i += 2 {
			parts = append(parts, strconv.Quote(string(v.Elems[i]))+"="+strconv.Quote(string(v.Elems[i+1])))
		}
	case TypeZSet:
		for i, e := range v.Elems {
			parts = append(parts, strconv.Quote(string(e))+"="+strconv.FormatFloat(v.Scores[i], 'g', -1, 64))
		}
	case TypeModule:
		// Items in order: a module reads them back as it wrote them.
		for _, it := range v.ModuleData {
			parts = append(parts, fmt.Sprintf("%d:%d:%x:%q", it.Kind, it.Int, math.Float64bits(it.Float), it.Str))
		}
		return fmt.Sprintf("module:%s.%d:", v.Module, v.ModuleVersion) + strings.Join(parts, ",")
	default:
		return v.Type.String()
	}
	sort.Strings(parts)
	return v.Type.String() + ":" + strings.Join(parts, ",")
}

// diff reports every difference between two keyspaces.
func (m model) diff(t *testing.T, what string, got model) {
	t.Helper()
	bad := 0
	for k, w := range m {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s: db %d key %q missing", what, w.db, w.key)
		case canonical(g.v) != canonical(w.v):
			t.Errorf("%s: db %d key %q = %.200s, want %.200s", what, w.db, w.key, canonical(g.v), canonical(w.v))
		case g.expire != w.expire:
			t.Errorf("%s: db %d key %q expires at %d, want %d", what, w.db, w.key, g.expire, w.expire)
		default:
			continue
		}
		if bad++; bad > 20 {
			t.Fatalf("%s: too many differences", what)
		}
	}
	for k, g := range got {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: db %d unexpected key %q", what, g.db, g.key)
		}
	}
}

// readFileModel reads an RDB file with Reader, also returning the object
// types it met (so a test can check which encodings it covered). It reads
// the file a second time with Reader.Borrow, copying each value before the
// next is read, and checks that both reads agree.
func readFileModel(t *testing.T, path string) (model, map[uint8]int) {
	t.Helper()
	m, encs, _ := readFileModelBorrow(t, path, false)
	borrowed, _, _ := readFileModelBorrow(t, path, true)
	m.diff(t, "borrowing reader", borrowed)
	return m, encs
}

// cloneValue is a deep copy of v, to keep past a borrowing Reader's Next,
// with a sorted set's Ints as the members and scores a Reader that does not
// borrow returns.
func cloneValue(v Value) Value {
	if v.Ints != nil {
		for _, n := range v.Ints {
			v.Elems = append(v.Elems, strconv.AppendInt(nil, n, 10))
			v.Scores = append(v.Scores, float64(n))
		}
		v.Ints = nil
		return v
	}
	v.Str = bytes.Clone(v.Str)
	if v.Elems != nil {
		elems := make([][]byte, len(v.Elems))
		for i, e := range v.Elems {
			elems[i] = bytes.Clone(e)
		}
		v.Elems = elems
	}
	v.Scores = slices.Clone(v.Scores)
	if v.ModuleData != nil {
		items := slices.Clone(v.ModuleData)
		for i := range items {
			items[i].Str = bytes.Clone(items[i].Str)
		}
		v.ModuleData = items
	}
	return v
}

// readFileModelBorrow is readFileModel's one read; selfKeyed holds the
// keys (db:key) that came as Value.Ints.
func readFileModelBorrow(t *testing.T, path string, borrow bool) (m model, encs map[uint8]int, selfKeyed map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	r, err := NewReader(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	r.Borrow = borrow
	m, encs, selfKeyed = model{}, map[uint8]int{}, map[string]bool{}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		if rec.Kind == KindKey {
			if rec.Value.Ints != nil {
				selfKeyed[mkey(rec.DB, string(rec.Key))] = true
			}
			if borrow {
				rec.Value = cloneValue(rec.Value)
			}
			m.add(rec.DB, string(rec.Key), rec.Value, rec.Expire)
			encs[rec.Value.Encoding]++
		}
	}
	return m, encs, selfKeyed
}

// writeFileModel writes m with Writer, database by database.
func writeFileModel(t *testing.T, path string, m model) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, "redis-ver", "7.0.15", "redis-bits", "64")
	byDB := map[int][]modelKey{}
	for _, k := range m {
		byDB[k.db] = append(byDB[k.db], k)
	}
	dbs := make([]int, 0, len(byDB))
	for db := range byDB {
		dbs = append(dbs, db)
	}
	sort.Ints(dbs)
	for _, db := range dbs {
		exp := 0
		for _, k := range byDB[db] {
			if k.expire != 0 {
				exp++
			}
		}
		w.SelectDB(db, uint64(len(byDB[db])), uint64(exp))
		for _, k := range byDB[db] {
			if err := w.Key([]byte(k.key), &k.v, k.expire); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// populate writes m into a running Redis with ordinary commands.
func populate(t *testing.T, r *redisServer, m model) {
	t.Helper()
	ctx := context.Background()
	for _, k := range m {
		c := r.db(t, k.db)
		var err error
		switch k.v.Type {
		case TypeString:
			err = c.Set(ctx, k.key, k.v.Str, 0).Err()
		case TypeList:
			err = c.RPush(ctx, k.key, anys(k.v.Elems)...).Err()
		case TypeSet:
			err = c.SAdd(ctx, k.key, anys(k.v.Elems)...).Err()
		case TypeHash:
			err = c.HSet(ctx, k.key, anys(k.v.Elems)...).Err()
		case TypeZSet:
			zs := make([]redis.Z, len(k.v.Elems))
			for i := range zs {
				zs[i] = redis.Z{Score: k.v.Scores[i], Member: k.v.Elems[i]}
			}
			err = c.ZAdd(ctx, k.key, zs...).Err()
		}
		if err == nil && k.expire != 0 {
			err = c.PExpireAt(ctx, k.key, time.UnixMilli(k.expire)).Err()
		}
		if err != nil {
			t.Fatalf("writing %q: %v", k.key, err)
		}
	}
}

func anys(bb [][]byte) []any {
	out := make([]any, len(bb))
	for i, b := range bb {
		out[i] = b
	}
	return out
}

// readRedis reads every key of databases 0-15 from a running Redis.
func readRedis(t *testing.T, r *redisServer) model {
	t.Helper()
	ctx := context.Background()
	m := model{}
	for db := 0; db < 16; db++ {
		c := r.db(t, db)
		keys, err := c.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range keys {
			typ, err := c.Type(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			var v Value
			switch typ {
			case "string":
				s, err := c.Get(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				v = Value{Type: TypeString, Str: []byte(s)}
			case "list":
				v = Value{Type: TypeList, Elems: bs(c.LRange(ctx, key, 0, -1).Val()...)}
			case "set":
				v = Value{Type: TypeSet, Elems: bs(c.SMembers(ctx, key).Val()...)}
			case "hash":
				v = Value{Type: TypeHash}
				for f, val := range c.HGetAll(ctx, key).Val() {
					v.Elems = append(v.Elems, []byte(f), []byte(val))
				}
			case "zset":
				v = Value{Type: TypeZSet}
				for _, z := range c.ZRangeWithScores(ctx, key, 0, -1).Val() {
					v.Elems = append(v.Elems, []byte(z.Member.(string)))
					v.Scores = append(v.Scores, z.Score)
				}
			default:
				t.Fatalf("key %q of type %s", key, typ)
			}
			exp, err := c.Do(ctx, "PEXPIRETIME", key).Int64()
			if err != nil {
				t.Fatal(err)
			}
			if exp < 0 {
				exp = 0
			}
			m.add(db, key, v, exp)
		}
	}
	return m
}

// testKeyspace is every type in small and large sizes, int and long and
// compressible strings, binary keys, TTLs, in several databases. Sizes are
// meant for the thresholds redisConfigs sets.
func testKeyspace() model {
	rng := rand.New(rand.NewSource(28))
	random := func(n int) []byte { b := make([]byte, n); rng.Read(b); return b }
	m := model{}
	str := func(db int, k string, v []byte, exp int64) { m.add(db, k, Value{Type: TypeString, Str: v}, exp) }
	hour := time.Now().Add(time.Hour).UnixMilli()
	for _, s := range []string{"0", "7", "-7", "127", "-128", "128", "-30000", "32767", "65536", "2000000000",
		"-2147483648", "2147483648", "9000000000000000000", "-9223372036854775808", "007", "+1", "-0", "1.5", ""} {
		str(0, "int:"+s, []byte(s), 0)
	}
	str(0, "short", []byte("hello"), 0)
	str(0, "lzf", bytes.Repeat([]byte("abcdefgh"), 500), 0)
	str(0, "random", random(100<<10), 0)
	str(0, "big-compressible", []byte(strings.Repeat("cellserver moves limiter state. ", 8000)), 0)
	str(0, "\x00\xff\r\nbinary key", random(30), hour)
	str(0, string(random(200)), []byte("long binary key"), 0)
	str(0, "ttl-far", []byte("x"), hour+12345)
	str(0, "ttl-seconds", []byte("y"), time.Now().Add(24*time.Hour).Unix()*1000)

	m.add(0, "list:small", Value{Type: TypeList, Elems: bs("a", "1", "-5", "bb", "300000", "")}, 0)
	var long [][]byte
	for i := 0; i < 1000; i++ {
		long = append(long, []byte(fmt.Sprintf("elem-%d", i)), []byte(strconv.Itoa(i*7919-50000)))
	}
	m.add(0, "list:large", Value{Type: TypeList, Elems: long}, hour)
	m.add(0, "list:plain", Value{Type: TypeList, Elems: [][]byte{[]byte("small"), random(300), []byte("x"), bytes.Repeat([]byte("z"), 5000)}}, 0)

	m.add(0, "hash:small", Value{Type: TypeHash, Elems: bs("f1", "v1", "n", "42", "neg", "-1", "", "empty-field")}, 0)
	var hl [][]byte
	for i := 0; i < 200; i++ {
		hl = append(hl, []byte(fmt.Sprintf("field:%d", i)), []byte(strconv.Itoa(i*i)))
	}
	hl = append(hl, random(20), random(40))
	m.add(0, "hash:large", Value{Type: TypeHash, Elems: hl}, hour)

	m.add(0, "zset:small", Value{Type: TypeZSet, Elems: bs("a", "b", "c", "d", "e", "12"),
		Scores: []float64{1.5, -2, math.Inf(1), math.Inf(-1), 0, 0.1}}, 0)
	var zm [][]byte
	var zs []float64
	for i := 0; i < 300; i++ {
		zm = append(zm, []byte(fmt.Sprintf("member-%d", i)))
		zs = append(zs, float64(i)*1.25-100+1e-9*float64(i))
	}
	zm, zs = append(zm, []byte("inf")), append(zs, math.Inf(1))
	m.add(0, "zset:large", Value{Type: TypeZSet, Elems: zm, Scores: zs}, 0)

	// Windows of timestamps: each member an integer that is its own score
	// (a borrowing Reader's Value.Ints), and two sets that are nearly so;
	// each small enough to be a listpack (redisConfigs).
	var win [][]byte
	var winScores []float64
	for i := range 8 {
		ts := int64(1_795_795_085_526 + 3*i)
		win = append(win, strconv.AppendInt(nil, ts, 10))
		winScores = append(winScores, float64(ts))
	}
	m.add(0, "zset:window", Value{Type: TypeZSet, Elems: win, Scores: winScores}, hour)
	m.add(0, "zset:window-neg", Value{Type: TypeZSet, Elems: bs("-70000", "-5", "0", "3", "4096", "9007199254740991"),
		Scores: []float64{-70000, -5, 0, 3, 4096, 9007199254740991}}, 0)
	m.add(0, "zset:window-not", Value{Type: TypeZSet, Elems: bs("1", "2", "7", "9"), Scores: []float64{1, 2, 8, 9}}, 0)
	m.add(0, "zset:window-big", Value{Type: TypeZSet, Elems: bs("1", "9007199254740993"), Scores: []float64{1, 9007199254740992}}, 0)

	m.add(0, "set:int", Value{Type: TypeSet, Elems: bs("1", "2", "-3", "100000", "5000000000")}, 0)
	m.add(0, "set:str", Value{Type: TypeSet, Elems: bs("a", "b", "c", "1")}, 0)
	var si [][]byte
	for i := 0; i < 100; i++ {
		si = append(si, []byte(strconv.Itoa(i*1000003)))
	}
	m.add(0, "set:bigint", Value{Type: TypeSet, Elems: si}, hour)

	// Other databases, some keys of the same names as in 0.
	str(1, "short", []byte("db one"), 0)
	m.add(1, "list:small", Value{Type: TypeList, Elems: bs("one")}, hour)
	str(5, "short", []byte("db five"), hour)
	m.add(15, "zset:small", Value{Type: TypeZSet, Elems: bs("x"), Scores: []float64{-0.5}}, 0)
	return m
}

// redisConfigs are the thresholds that make testKeyspace's small
// aggregates compact and its large ones not.
var redisConfigs = [][2]string{
	{"list-max-listpack-size", "16"},
	{"hash-max-listpack-entries", "8"},
	{"hash-max-listpack-value", "64"},
	{"zset-max-listpack-entries", "8"},
	{"zset-max-listpack-value", "64"},
	{"set-max-intset-entries", "16"},
}

func configure(t *testing.T, r *redisServer) {
	t.Helper()
	ctx := context.Background()
	for _, kv := range redisConfigs {
		if err := r.c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Elements from 100 bytes up go into plain quicklist nodes.
	if err := r.c.Do(ctx, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100").Err(); err != nil {
		t.Fatal(err)
	}
}
