package server

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/sngen/sn/internal/batchjson"
	"github.com/sngen/sn/wire"
)

// Numbers written by hand read back as encoding/json reads them, whatever
// their characters.
func TestReplyNumbers(t *testing.T) {
	nums := []string{"SN-00000001-8", `a"b`, `back\slash`, "é/ü", "\x01\n", "<&>", ""}
	rec := httptest.NewRecorder()
	replyNumbers(rec, batchjson.Append(nil, strs(nums)))
	var got wire.NextResponse
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
