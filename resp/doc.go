// Package resp is the wire: it reads client commands and writes RESP2 and
// RESP3 replies, and it parses arguments with Redis 7.0's exact rules.
//
// The Reader parses requests in place: the arguments it returns are slices
// of its own buffer, valid until the next call to Fill. That keeps the hot
// path free of allocations; anything that outlives the current pipeline
// batch (a MULTI queue, a stored key) must be copied by the caller.
//
// The Reader enforces Redis's request limits before it allocates anything
// on a client's behalf: a multibulk count or bulk length that is out of range
// is refused from its header alone, and the buffered query may not grow past
// the query-buffer limit. Protocol errors carry Redis's exact text; after one
// the connection must be closed, as Redis does.
//
// The Writer appends replies to a byte slice in the connection's protocol
// version, so one command handler serves RESP2 and RESP3 clients alike.
// Error and status lines never carry CR or LF: they are replaced by spaces,
// as Redis does, so a reply can never inject protocol.
package resp
