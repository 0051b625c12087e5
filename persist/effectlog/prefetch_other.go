//go:build !amd64

package effectlog

func prefetch(*byte) {}
