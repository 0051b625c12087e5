package integration_test

import "testing"

// FUNCTION on a server without functions.
func TestFunctionNoFunctions(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("FUNCTION", "FLUSH")
		c.Do("FUNCTION", "FLUSH", "ASYNC")
		c.Do("FUNCTION", "flush", "sync")
		c.Error("FUNCTION", "FLUSH", "x")
		c.Error("FUNCTION", "FLUSH", "SYNC", "ASYNC")
		c.Do("FUNCTION", "LIST")
		c.Do("FUNCTION", "LIST", "WITHCODE")
		c.Do("FUNCTION", "LIST", "LIBRARYNAME", "x*")
		c.Error("FUNCTION", "LIST", "x")
		c.Do("FUNCTION", "STATS")
		c.Do("FUNCTION", "HELP")
		c.Error("FUNCTION")
		c.Error("FUNCTION", "nosuch")
	})
}
