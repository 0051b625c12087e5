package rdb

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestReadRedisFile has redis-server 7.0 build testKeyspace, SAVE it, and
// checks that Reader reads back every key, value and expiry, through the
// encodings Redis chose (listpacks for the small aggregates, hashtables and
// skiplists for the large, intsets, plain quicklist nodes, int-encoded and
// LZF-compressed strings).
func TestReadRedisFile(t *testing.T) {
	dir := t.TempDir()
	r := startRedis(t, dir, "dump.rdb")
	configure(t, r)
	want := testKeyspace()
	populate(t, r, want)
	if err := r.c.Save(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	got, encs := readFileModel(t, filepath.Join(dir, "dump.rdb"))
	want.diff(t, "Reader of redis-server's SAVE", got)
	// The windows of integers that are their own scores, and only they,
	// come to a borrowing Reader as Value.Ints.
	_, _, selfKeyed := readFileModelBorrow(t, filepath.Join(dir, "dump.rdb"), true)
	for key, want := range map[string]bool{"zset:window": true, "zset:window-neg": true,
		"zset:window-not": false, "zset:window-big": false, "zset:small": false} {
		if selfKeyed[mkey(0, key)] != want {
			t.Errorf("%s read as Value.Ints: %v, want %v", key, selfKeyed[mkey(0, key)], want)
		}
	}
	for _, e := range []uint8{typeString, typeListQuicklist2, typeHashListpack, typeHash,
		typeZSetListpack, typeZSet2, typeSetIntset, typeSet} {
		if encs[e] == 0 {
			t.Errorf("redis-server's file had no value of object type %d; the keyspace no longer covers it", e)
		}
	}
}

// TestRedisLoadsWriterFile writes testKeyspace with Writer and checks that
// redis-server 7.0 loads it at start with every key, value and expiry.
func TestRedisLoadsWriterFile(t *testing.T) {
	dir := t.TempDir()
	want := testKeyspace()
	writeFileModel(t, filepath.Join(dir, "ours.rdb"), want)
	r := startRedis(t, dir, "ours.rdb")
	want.diff(t, "redis-server loading Writer's file", readRedis(t, r))
}

// TestDumpBothWays: every key's DUMP from redis-server decodes to its value
// here, and EncodeDump's payload RESTOREs in redis-server to the same value.
func TestDumpBothWays(t *testing.T) {
	dir := t.TempDir()
	r := startRedis(t, dir, "dump.rdb")
	configure(t, r)
	want := testKeyspace()
	populate(t, r, want)
	ctx := context.Background()
	restored := model{}
	for _, k := range want {
		c := r.db(t, k.db)
		p, err := c.Dump(ctx, k.key).Result()
		if err != nil {
			t.Fatal(err)
		}
		v, err := DecodeDump([]byte(p))
		if err != nil {
			t.Fatalf("DecodeDump of redis-server's DUMP %q: %v", k.key, err)
		}
		if canonical(v) != canonical(k.v) {
			t.Errorf("DUMP %q decoded to %.200s, want %.200s", k.key, canonical(v), canonical(k.v))
		}
		ours, err := EncodeDump(&k.v)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Do(ctx, "RESTORE", "restored:"+k.key, k.expire, ours, "ABSTTL").Err(); err != nil {
			t.Fatalf("redis-server RESTORE of our payload for %q: %v", k.key, err)
		}
		restored.add(k.db, "restored:"+k.key, k.v, k.expire)
	}
	got := readRedis(t, r)
	for k := range got {
		if _, ok := restored[k]; !ok {
			delete(got, k)
		}
	}
	restored.diff(t, "redis-server RESTORE of EncodeDump", got)

	// A payload redis-server refuses, we refuse the same way.
	p, _ := EncodeDump(&Value{Type: TypeString, Str: []byte("v")})
	p[len(p)-1] ^= 1
	if err := r.c.Do(ctx, "RESTORE", "bad", 0, p).Err(); err == nil || err.Error() != "ERR "+ErrDumpPayload.Error() {
		t.Errorf("redis-server on a bad checksum: %v", err)
	}
	if _, err := DecodeDump(p); err != ErrDumpPayload {
		t.Errorf("DecodeDump on a bad checksum: %v", err)
	}
}

// TestRedisLoadsOldEncodings writes a version-9 file with the encodings
// Redis 7.0 no longer writes but still loads (ziplists, zipmaps, quicklists
// of ziplists, string scores, expiry in seconds), has redis-server load it,
// and checks that Reader reads what redis-server holds.
func TestRedisLoadsOldEncodings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "old.rdb")
	if err := os.WriteFile(path, oldEncodingsFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	ours, encs := readFileModel(t, path)
	for _, e := range []uint8{typeListZiplist, typeSetIntset, typeZSetZiplist, typeHashZiplist,
		typeHashZipmap, typeListQuicklist, typeZSet, typeList, typeSet, typeHash} {
		if encs[e] == 0 {
			t.Errorf("old-encodings file has no value of type %d", e)
		}
	}
	r := startRedis(t, dir, "old.rdb")
	theirs := readRedis(t, r)
	if len(theirs) != len(ours) {
		t.Errorf("redis-server loaded %d keys, Reader %d", len(theirs), len(ours))
	}
	theirs.diff(t, "Reader against redis-server on old encodings", ours)
}
