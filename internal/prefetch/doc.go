// Package prefetch asks the CPU for cache lines ahead of their use: the
// effect log's tail before records are copied there, the entries a
// checkpoint is about to visit. A prefetch is a hint: it neither faults
// nor waits, and on other architectures it does nothing.
package prefetch
