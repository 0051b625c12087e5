package cell

import "github.com/cellserver/cellserver/cell/hashslot"

// ClusterSlots is the number of hash slots of Redis Cluster.
const ClusterSlots = hashslot.Count

// KeySlot is the hash slot of key, hash tags included: CRC16/XMODEM mod
// 16384, as Redis (the code lives in cell/hashslot, which bench shares).
func KeySlot(key []byte) int { return hashslot.Of(key) }
