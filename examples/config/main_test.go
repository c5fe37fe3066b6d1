package main

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRun(t *testing.T) {
	state := filepath.Join(t.TempDir(), "shop") // created by run
	// 2017-03-31T20:00Z is already April 1 in Shanghai.
	at := time.Date(2017, 3, 31, 20, 0, 0, 0, time.UTC)
	runs := []string{
		"invoices: [INV201704-0001 INV201704-0002 INV201704-0003]\n" +
			"orders:   [SN-00020001-4 SN-00020002-2 SN-00020003-0]\n" +
			"tickets:  [QJ001 QJ002 QJ003]\n",
		// The first run handed back at Close what its blocks of 50 held
		// and it did not issue, so the second continues in shop.db; the
		// memory counter starts again.
		"invoices: [INV201704-0004 INV201704-0005 INV201704-0006]\n" +
			"orders:   [SN-00020004-8 SN-00020005-5 SN-00020006-3]\n" +
			"tickets:  [QJ001 QJ002 QJ003]\n",
	}
	// The file and the built-in copy are the same config.
	for i, want := range runs {
		path := []string{"sn.yaml", ""}[i]
		var out bytes.Buffer
		if err := run(&out, path, state, func() time.Time { return at }); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if diff := cmp.Diff(want, out.String()); diff != "" {
			t.Errorf("run %d output (-want +got):\n%s", i+1, diff)
		}
	}
}

func TestRunBadConfig(t *testing.T) {
	err := run(&bytes.Buffer{}, "missing.yaml", t.TempDir(), time.Now)
	if want := "config: open missing.yaml: no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("run = %v, want %s", err, want)
	}
}
