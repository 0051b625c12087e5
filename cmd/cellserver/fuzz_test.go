package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzConfigFile: no file content makes reading and applying a
// configuration panic; it is accepted or refused with a message.
func FuzzConfigFile(f *testing.F) {
	for _, seed := range []string{
		"port 1\n", "bind \"a\\x41\" 'b'\n", "include /nonexistent\n", "save\n",
		"client-output-buffer-limit normal 1 2 3 pubsub 1gb 1gb 99999999999999999999\n",
		"rename-command get \"\"\nrename-command set get\n", "\x00port\x00 1", "maxmemory 9223372036854775807gb\n",
		"requirepass \"\\\"\n", "lua-time-limit -1\n", "hz 0\nshards 3\n",
	} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "fuzz.conf")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Skip()
		}
		var out bytes.Buffer
		cfg, err := parseFlags([]string{p}, &out)
		if err == nil && cfg.ConfigFile != p {
			t.Errorf("accepted without recording the file")
		}
	})
}
