// Command bench measures cellserver against redis-server 7.0 on the same
// machine, with the same load, in one run:
//
//	go run ./bench                 # every workload, depths 1 and 16, ~5 s a row
//	go run ./bench -quick          # a smoke run
//	go run ./bench -workloads throttle,w1 -depths 16 -json-file out.json
//	go run ./bench -mem            # bytes per key and per element (CL.WINDOW beside W1)
//	go run ./bench -redis-module /path/to/libredis_cell.so
//	go run ./bench -cluster-nodes 1,2,3   # cellserver as 1-, 2-, 3-node clusters
//	go run ./bench -scan           # full SCAN and KEYS over 1M keys, GET latency meanwhile
//	go run ./bench -bigarg         # RSS for a 500 MiB SET and for unfinished uploads
//	go run ./bench -fixed-load 25,50,75   # open-loop latency at fixed loads
//	go run ./bench -repl           # throttle and W1 with one replica attached; a full resync of 1.1M keys
//
// It builds ./cmd/cellserver into a temporary directory, starts it and a
// redis-server (and, with -redis-module, a second redis-server with that
// module loaded) on free 127.0.0.1 ports, runs each workload against each
// server in turn while the others idle, and stops every process it started,
// by pid, on exit and on Ctrl-C. Persistence is matched: off by default
// (redis --save "" --appendonly no); -persist always|everysec|no turns on
// Redis's append-only file with that fsync policy and passes the same to
// cellserver when its --help lists such flags (the report says when it
// does not).
//
// What persistence costs cellserver is measured beside itself:
// -servers cellserver,cellserver-off -persist everysec -rounds N starts a
// second cellserver with --appendonly no, alternates the two on every row
// N times (the order reversed every other round, so that neither always
// runs first), and reports the cellserver row against cellserver-off. Run
// separately, the two halves of such a comparison land minutes apart, and
// on a shared virtual machine the speed of the same binary drifts by more
// than the 10% being measured. Each keeps its best round, as everywhere
// here; rows long enough to hold a checkpoint (-duration 8s or more over a
// million keys) keep that from flattering the persistent one. With three
// rounds or more the ratio column adds the paired figure (paired.go): the
// median, over the rounds, of the ratio of the two servers' runs of one
// round, which ran seconds apart, and the range of those ratios. It is the
// one to judge a difference of a few percent by; two best rounds may come
// from different minutes.
//
// What is measured, per workload, pipeline depth and server:
//
//   - ops/s: operations completed in the measured window (after a warm-up
//     that is not counted), over its length. One operation is one
//     rate-limit decision: one command for PING/SET/GET/CL.THROTTLE/EVALSHA,
//     a six-command MULTI...EXEC for W1, INCR plus EXPIRE NX for W3.
//   - latency p50/p99/p99.9: per pipeline round trip, from writing a batch
//     of <depth> operations to reading its last reply, not divided by
//     depth. Log-linear histograms, within 1.6%.
//   - server CPU per operation: the server process's utime+stime (all
//     threads) from /proc/PID/stat over the measured window, in clock ticks
//     of 1/CLK_TCK s (10 ms on Linux), divided by the operations. It is the
//     cost a deployment pays, independent of how many cores the server
//     spread it over.
//   - driver CPU per operation, the same for this process: when it nears
//     the server's, the client shares the machine's cores and caps the
//     numbers; on a 2-core machine it does at depth 1.
//   - RSS at the end of the window, from /proc/PID/status.
//   - for cellserver, its ratio to the reference row: redis+module for
//     CL.THROTTLE, plain redis otherwise.
//
// The load generator is its own: each connection keeps exactly one batch in
// flight, writes it with one syscall and reads the replies with a minimal
// RESP reader that allocates nothing per reply. Commands are pre-encoded;
// only keys (drawn from a table of pre-encoded keys) and timestamps are
// placed per operation. No client library runs in the hot loop, so the
// client costs a few microseconds per round trip and the servers, not the
// driver, set the pace at depth 16.
//
// Workloads whose commands a server lacks are not errors: a probe
// operation before each row sees Redis's "unknown command" reply and the
// row reads "skipped: ZADD not supported by cellserver". Plain redis-server
// has no CL.THROTTLE: those rows are "n/a". The Lua GCRA (gcra.lua) is the
// CL.THROTTLE algorithm as people ship it for Redis without the module,
// reading TIME and storing the TAT with GET and SET PX.
//
// Memory mode (-mem) loads N throttle keys (CL.THROTTLE on cellserver and
// redis+module; the Lua GCRA's string keys on redis and cellserver) and N
// W1 windows of 10, 100 and 1000 entries (capped at -mem-max-elements
// elements per size) into a fresh server each, and reports the growth of
// INFO used_memory (where the server has it) and of RSS per key and per
// element.
//
// Cluster mode (-cluster-nodes 1,2,3) runs cellserver alone, as clusters
// of each given size on this machine (--cluster-enabled, formed on the
// cluster bus with the slots split evenly), and routes every connection's keys to its
// node by slot with cell/hashslot, the server's own code, as a cluster
// client does: no request is redirected. Rows give ops/s, latency, and the
// server CPU per operation and RSS summed over the nodes (default
// workloads: throttle and w1; w3 cannot be routed, its key changes with
// the window). bench/results/cluster.md says what bounds it on 2 cores.
//
// Restart mode (-restart, persistence everysec unless -persist says
// otherwise) loads -restart-keys throttle keys and -restart-windows W1
// windows into each server, stops it (cellserver by SIGTERM and by
// SIGKILL; redis by SIGTERM with its AOF, and again from an RDB SAVE) and
// reports the disk each used and the time from the restart's exec until it
// answers PING with loading:0 (restart.go).
//
// Fixed-load mode (-fixed-load 25,50,75) measures latency at a fixed
// offered load instead of at saturation: the reference's maximum at depth
// 1 first (redis; redis+module for CL.THROTTLE, or without the module
// redis running the Lua GCRA), then each percentage of it offered to every
// server in an open loop, requests leaving on schedule whatever the
// replies, latency counted from each request's scheduled send
// (openloop.go, fixedload.go). Default workloads: throttle, set, w1.
// With -rounds N each load runs N times, the servers alternating, and the
// table gives the median of each figure with the range of the
// percentiles: one run's p99 swings by a third.
//
// With -syscalls, perf stat counts every server's system calls (all,
// read, write, epoll, futex) and context switches over each row's measured
// window, and a second table gives them per operation: numbers that hold
// on a loaded machine, unlike CPU time (syscalls.go).
//
// With -profile DIR, perf records cellserver during its rows (perf's own
// overhead skews those rows) and perf report's text lands in DIR.
package main
