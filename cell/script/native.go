package script

import "strings"

// What a Go implementation of a known script (the server's native
// scripts) needs to give the same bytes as this package's Lua: how a Lua
// number becomes text and an integer reply, and where an error is said to
// happen.

// FormatNumber is tostring of a Lua number: C's "%.14g".
func FormatNumber(f float64) string { return fmt14(f) }

// AppendNumber appends FormatNumber(f) to b.
func AppendNumber(b []byte, f float64) []byte { return appendG(b, f, 14) }

// AppendCallNumber appends a Lua number as redis.call passes it to a
// command: C's "%.17g".
func AppendCallNumber(b []byte, f float64) []byte { return appendG17(b, f) }

// ToInteger is a Lua number returned to the client: C's (long long) cast.
func ToInteger(f float64) int64 { return toInteger(f) }

// CallError is the reply of a script that redis.call stopped with the
// error reply e (a RESP error line, "-CODE text\r\n") at line of the
// script's body: Redis 7.0's "<err> script: <sha>, on @user_script:<line>.".
// Its error was counted when the command failed, so the script's Outcome
// does not count it again.
func CallError(e []byte, sha string, line int) string {
	code, msg := "ERR", strings.TrimPrefix(string(e), "-")
	if c, m, ok := strings.Cut(msg, " "); ok {
		code, msg = c, m
	}
	return code + " " + strings.Trim(msg, "\r\n") + " script: " + sha + ", on @" + chunkName + ":" + itoa(line) + "."
}
