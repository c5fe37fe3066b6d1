package server

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// Numbers written by hand read back as encoding/json reads them, whatever
// their characters.
func TestReplyBatch(t *testing.T) {
	nums := []string{"SN-00000001-8", `a"b`, `back\slash`, "é/ü", "\x01\n", "<&>", ""}
	rec := httptest.NewRecorder()
	bt := getBatch()
	for _, n := range nums {
		bt.b = append(bt.b, n...)
		bt.ends = append(bt.ends, len(bt.b))
	}
	replyBatch(rec, bt)
	var got NextResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v in %s", err, rec.Body)
	}
	if len(got.Numbers) != len(nums) {
		t.Fatalf("got %q", got.Numbers)
	}
	for i := range nums {
		if got.Numbers[i] != nums[i] {
			t.Errorf("%q read back as %q", nums[i], got.Numbers[i])
		}
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
}
