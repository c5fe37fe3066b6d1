package sequence_test

import (
	"os/exec"
	"regexp"
	"runtime"
	"testing"
)

// The compiler inlines SegmentKey.TryNext into its callers: that is its
// reason to exist beside Next. A change that makes its body too big (a
// call, a second loop) fails here, not in a benchmark nobody reads.
func TestTryNextInlines(t *testing.T) {
	out, err := exec.Command(runtime.GOROOT()+"/bin/go", "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`can inline \(\*SegmentKey\)\.TryNext`).Match(out) {
		t.Errorf("the compiler no longer inlines (*SegmentKey).TryNext; go build -gcflags=-m says:\n%s",
			regexp.MustCompile(`(?m)^.*TryNext.*$`).FindAll(out, -1))
	}
}
