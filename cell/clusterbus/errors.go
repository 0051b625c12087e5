package clusterbus

import "fmt"

// Error is a refusal of an administrative call, its text Redis 7.0's
// reply to the CLUSTER subcommand, "ERR " included.
type Error string

func (e Error) Error() string { return string(e) }

func errorf(format string, a ...any) Error { return Error("ERR " + fmt.Sprintf(format, a...)) }

// Texts shared with the topology-file mode of the server.

// ErrUnknownNode is "Unknown node <id>".
func ErrUnknownNode(id string) Error { return errorf("Unknown node %s", id) }

// ErrDontKnowNode is SETSLOT MIGRATING/IMPORTING's wording of it.
func ErrDontKnowNode(id string) Error { return errorf("I don't know about node %s", id) }

// ErrNotOwner is SETSLOT MIGRATING for a slot served elsewhere.
func ErrNotOwner(slot int) Error { return errorf("I'm not the owner of hash slot %d", slot) }

// ErrAlreadyOwner is SETSLOT IMPORTING for a slot served here.
func ErrAlreadyOwner(slot int) Error { return errorf("I'm already the owner of hash slot %d", slot) }

// ErrSlotHasKeys is SETSLOT NODE giving away a slot that still has keys.
func ErrSlotHasKeys(slot int) Error {
	return errorf("Can't assign hashslot %d to a different node while I still hold keys for this hash slot.", slot)
}

const (
	errSetSlotReplica     = Error("ERR Please use SETSLOT only with masters.")
	errNotMaster          = Error("ERR Target node is not a master")
	errForgetMyself       = Error("ERR I tried hard but I can't forget myself...")
	errForgetMaster       = Error("ERR Can't forget my master!")
	errReplicateMyself    = Error("ERR Can't replicate myself")
	errReplicateReplica   = Error("ERR I can only replicate a master, not a replica.")
	errReplicateBusy      = Error("ERR To set a master the node must be empty and without assigned slots.")
	errNotAMaster         = Error("ERR The specified node is not a master")
	errEpochKnown         = Error("ERR The user can assign a config epoch only when the node does not know any other node.")
	errEpochNonZero       = Error("ERR Node config epoch is already non-zero")
	errResetKeys          = Error("ERR CLUSTER RESET can't be called with master nodes containing keys")
	errFailoverMaster     = Error("ERR You should send CLUSTER FAILOVER to a replica")
	errFailoverNoMaster   = Error("ERR I'm a replica but my master is unknown to me")
	errFailoverMasterDown = Error("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE")
)
