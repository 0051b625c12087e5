package cell

import "github.com/cellserver/cellserver/cell/keyspace"

// Asking for the keys' index lines before a pipeline runs.
//
// A lookup of one key among many waits for the index's slot line from
// memory (keyIndex.find is about a fifth of CL.THROTTLE's CPU at depth 16
// over 100,000 keys). Once a read has brought a pipeline's requests,
// their keys are known before the first one runs: prefetchKeys asks the
// CPU for each key's lines then (keyspace.Hint), so the later
// requests find them in the cache instead of waiting one after another.

// prefetchMax bounds the requests one read's hints look at.
const prefetchMax = 32

// prefetchKeys hints the keys of the whole requests the last Fill left
// in the buffer, which it has the reader parse for the hints and for
// Next at once (resp.Reader.Ahead; the key is the second argument, where
// most commands have their key, or a script call's first key; for other
// commands the hint is merely useless). It asks for every key's index
// lines, then for every entry those lines point to, then for every
// entry's value, then for what commands read first inside it: each step
// finds the lines the step before asked for arrived or on their way, so
// the misses of all the keys overlap.
func (c *Client) prefetchKeys() {
	reqs := c.rd.Ahead(prefetchMax, c.authed)
	var hints [prefetchMax]keyspace.KeyHint
	n := 0
	var last []byte
	var h uint64
	for i := range reqs {
		key := c.rd.AheadKey(i)
		if key == nil {
			continue
		}
		// A MULTI block names its key once per command: one hint is
		// enough, and one hash for all.
		if string(key) != string(last) {
			h = keyspace.KeyHash(key)
			hints[n] = c.srv.ks.HintHash(c.db, key, h)
			n++
			last = key
		}
		c.rd.SetAheadTag(i, h) // the request's lookups use it (lockFor)
	}
	if n < 2 {
		return // one request: its lookup comes next, nothing to overlap
	}
	for _, h := range hints[:n] {
		h.PrefetchEntry()
	}
	inside := 0 // the sorted sets, moved to the front
	for _, h := range hints[:n] {
		if h.PrefetchValue() {
			hints[inside] = h
			inside++
		}
	}
	for _, h := range hints[:inside] {
		h.PrefetchInside()
	}
}
