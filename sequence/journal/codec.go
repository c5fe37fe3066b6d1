package journal

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// eventJSON is a journal record as a store that keeps records as values
// writes it (bbolt, etcd): JSON, so that a reader of the store (bbolt's
// command, etcdctl, a script) can follow it. Its Seq is the value's key.
type eventJSON struct {
	Kind     string `json:"kind"`
	First    int64  `json:"first,omitempty"`
	Last     int64  `json:"last,omitempty"`
	At       int64  `json:"at_us"`
	By       string `json:"by"`
	Actor    string `json:"actor,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Deadline int64  `json:"deadline_us,omitempty"`
	Hash     string `json:"hash"`
}

// MarshalEvent encodes e but its Seq as the JSON a store that keeps
// records as values writes: kind, first, last, at_us, by, actor, reason,
// deadline_us and hash (hexadecimal).
func MarshalEvent(e Event) []byte {
	v, _ := json.Marshal(eventJSON{Kind: e.Kind.String(), First: e.Range.First, Last: e.Range.Last, At: micros(e.At), By: e.By,
		Actor: e.Actor, Reason: e.Reason, Deadline: micros(e.Deadline), Hash: hex.EncodeToString(e.Hash[:])})
	return v
}

// UnmarshalEvent decodes what [MarshalEvent] wrote, the record seq. A
// hash that does not decode is left zero, for [VerifyChain] to report.
func UnmarshalEvent(seq int64, v []byte) (Event, error) {
	var r eventJSON
	if err := json.Unmarshal(v, &r); err != nil {
		return Event{}, fmt.Errorf("record %d: %v", seq, err)
	}
	kind, err := ParseEventKind(r.Kind)
	if err != nil {
		return Event{}, fmt.Errorf("record %d: %v", seq, err)
	}
	e := Event{Seq: seq, Kind: kind, Range: Range{First: r.First, Last: r.Last}, At: FromMicros(r.At), By: r.By,
		Actor: r.Actor, Reason: r.Reason, Deadline: FromMicros(r.Deadline)}
	if h, err := hex.DecodeString(r.Hash); err == nil && len(h) == 32 {
		copy(e.Hash[:], h)
	}
	return e, nil
}
