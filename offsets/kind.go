package offsets

// KindShare is the Kind of a Kafka share group (KIP-932): it has a
// share-partition start offset per partition where a consumer group has a
// committed offset, and a reset moves that start offset. Plans of
// consumer groups have no Kind, so their files and IDs read as before.
const KindShare = "share"

// Kinded is a Broker that resets another kind of group than a consumer
// group of its broker (a Kafka share group), so that one cluster may offer
// several resets, told apart by Kind.
type Kinded interface {
	// Kind is what the broker's groups are, as Plan.Kind says.
	Kind() string
}

// KindOf is b's Kind, "" for a consumer group.
func KindOf(b Broker) string {
	if k, ok := b.(Kinded); ok {
		return k.Kind()
	}
	return ""
}

// identity is the ID a plan of p's contents has: PlanID, and for a kind of
// group other than a consumer group the same hash under a header naming
// the kind, so a share group's plan can never pass for a consumer group's.
func (p Plan) identity() string {
	if p.Kind == "" {
		return PlanID(p.Cluster, p.Group, p.Partitions)
	}
	return planHash("queuewatch offsets plan v1 "+p.Kind, p.Cluster, p.Group, p.Partitions)
}
