// Package cell is the server: connections, dispatch, the command families,
// persistence glue, cluster routing, configuration and observability. The
// keys themselves live in cell/keyspace, which knows nothing of this
// package.
//
// The request path, in order:
//
//   - server.go: Server, its listeners; accept starts a Client per
//     connection.
//   - client.go: Client.serve reads commands (resp.Reader), run
//     dispatches each, flush writes the replies (after waitDurable under
//     appendfsync always, persist.go).
//   - dispatch.go: dispatch runs Redis's checks in processCommand's order
//     (auth, MULTI, cluster_route.go, maxmemory.go, CLIENT PAUSE), locks
//     the command's shards (lockFor, a keyspace.LockSet), calls the
//     handler, commits its effects (commitEffects, persist.go) and records
//     its time (stats_tally.go, observe.go).
//   - ctx.go: Ctx, what a handler gets: arguments, reply writer and a
//     keyspace.Tx, the only way a handler reads or changes keys.
//     lookup.go holds the typed lookups that answer WRONGTYPE.
//   - cmd_<family>.go: the handlers, each named after its command;
//     command.go and command_meta.go the command table.
//
// Around it: cmd_txn.go (MULTI/EXEC/WATCH), cmd_script.go and scriptctx.go
// (EVAL, cell/script runs the Lua), persist*.go (the store: effects,
// loading, replay, checkpoints' schedule), expire_loop.go (the active
// expiry goroutine), maxmemory.go (the limit and its policies), cluster*.go
// (the topology and routing), config*.go and ops.go (CONFIG and its
// start-up values), command_rename.go, listen.go (listeners, protected
// mode), output_limits.go, stats*.go, metrics.go, observe.go,
// slowlog.go, latency.go, monitor.go (INFO, /metrics and the observers),
// pubsub.go and cmd_pubsub.go (publish/subscribe: the sharded registry,
// delivery, subscribed mode), outsink.go (the output of a client others
// write to: monitors and subscribers, with their output buffer limits),
// errors.go (every error text).
package cell
