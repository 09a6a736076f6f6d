package components

// ResetForm is what the offset reset dialog needs of a group: a consumer
// group's or a share group's.
type ResetForm struct {
	// API is the group's offsets API, …/offsets (plan, apply).
	API string
	// Group is the group's name, which the operator types to apply.
	Group string
	// Topics are the topics the scope may be narrowed to.
	Topics []string
	// Share is a Kafka share group: it has start offsets, so only the
	// specs kafka-share-groups offers (no shift, no copy of a group).
	Share bool
	// Note explains, when set, what a reset means for this kind of group.
	Note string
}

func (f ResetForm) title() string {
	if f.Share {
		return "Reset start offsets of share group"
	}
	return "Reset offsets of"
}

// groupResetForm is the reset form of a consumer group's page.
func groupResetForm(d GroupData) ResetForm {
	f := ResetForm{API: d.ResetAPI, Group: d.Group.Name}
	for _, t := range d.Topics {
		f.Topics = append(f.Topics, t.Topic)
	}
	return f
}

// ShareResetNote is what a share group's reset means, shown in its form.
const ShareResetNote = "A share group's reset moves its start offset: records before it count as done with. " +
	"The broker also forgets what is in flight, so records acknowledged past the old start offset are delivered again when the new one is below it."

// shareResetForm is the reset form of a share group's page.
func shareResetForm(d ShareGroupData) ResetForm {
	f := ResetForm{API: d.ResetAPI, Group: d.Group.Name, Share: true, Note: ShareResetNote}
	for _, p := range d.Group.Partitions {
		if n := len(f.Topics); n == 0 || f.Topics[n-1] != p.Topic {
			f.Topics = append(f.Topics, p.Topic)
		}
	}
	return f
}
