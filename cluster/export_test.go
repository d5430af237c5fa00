package cluster

// PartitionOf is the inbound partition of a thread's events.
var PartitionOf = partitionOf
