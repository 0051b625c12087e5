//go:build !amd64

package prefetch

// Line does nothing here.
func Line(*byte) {}

// Addr does nothing here.
func Addr(uintptr) {}
