// Package masking hides configured values of dead letters before they
// leave the process: fields of JSON or schema-decoded bodies and keys
// (by JSONPath: $.card.number, $..email, $.items[*].iban), header and
// property values by name, or everything but an allow-list (show_only).
//
// Masking makes a copy for display. The bytes a replay, move or restore
// sends never pass through here.
package masking
