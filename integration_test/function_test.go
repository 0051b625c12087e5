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
		c.Error("FUNCTION", "LIST", "LIBRARYNAME")
		c.Error("FUNCTION", "LIST", "WITHCODE", "WITHCODE")
		c.Error("FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b")
		c.Do("FUNCTION", "LIST", "withcode", "libraryname", "a")
		c.Error("FUNCTION", "DELETE", "nosuch")
		c.Error("FUNCTION", "KILL")
		c.Error("FUNCTION", "STATS", "x")
		c.Do("FUNCTION", "STATS")
		// FUNCTION HELP differs: it leaves out LOAD, DUMP and RESTORE,
		// which are not served (cell's TestHelpListsServedSubcommands).
		c.Error("FUNCTION")
		c.Error("FUNCTION", "nosuch")
	})
}
