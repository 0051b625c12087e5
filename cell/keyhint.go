package cell

import "github.com/cellserver/cellserver/resp"

// Asking for the keys' index lines before a pipeline runs.
//
// A lookup of one key among many waits for the index's slot line from
// memory (keyIndex.find is about a fifth of CL.THROTTLE's CPU at depth 16
// over 100,000 keys). Once a read has brought a pipeline's requests,
// their keys are known before the first one runs: prefetchKeys asks the
// CPU for each key's lines then (keyspace.Prefetch), so the later
// requests find them in the cache instead of waiting one after another.

// prefetchMax bounds the requests one read's hints look at.
const prefetchMax = 32

// prefetchKeys hints the keys of the whole requests the last Fill left
// in the buffer: each request's second argument, where most commands
// have their key; for other commands the hint is merely useless.
func (c *Client) prefetchKeys() {
	b := c.rd.Unparsed()
	var last []byte
	for i := 0; i < prefetchMax && len(b) > 0; i++ {
		key, n := resp.RequestKey(b)
		if n == 0 {
			return
		}
		// A MULTI block names its key once per command: once is enough.
		if key != nil && string(key) != string(last) {
			c.srv.ks.Prefetch(c.db, key)
			last = key
		}
		b = b[n:]
	}
}
