package prefetch

// Line brings p's cache line into the CPU's caches, without waiting for it
// and without faulting (prefetch_amd64.s).
//
//go:noescape
func Line(p *byte)

// Addr is Line for an address that may be no object's, read from memory
// another goroutine may be changing: a hint that is wrong costs nothing,
// since a prefetch never faults.
func Addr(a uintptr)
