package backend_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/internal/redistest"
	"github.com/sngen/sn/sequence"
	"github.com/sngen/sn/sequence/snowflake"
)

// memLedgers are the ledgers of the memtest:// scheme, by URL: one per URL
// for the test process, shared by every Build, as a database is.
var memLedgers sync.Map // string -> *memLedger

// memLedgerDriver is a ledger driver that no backend of sn knows: it
// keeps its ledgers in memory.
type memLedgerDriver struct{}

func (memLedgerDriver) CheckLedger(t *config.Target, url string) (config.LedgerInfo, error) {
	if url == "" {
		return config.LedgerInfo{}, nil
	}
	return config.LedgerInfo{ID: "ledger " + url}, nil
}

func (memLedgerDriver) OpenLedger(ctx context.Context, t *config.Target, url string) (config.Ledger, error) {
	v, _ := memLedgers.LoadOrStore(url, &memLedger{sequence.NewMemoryAllocator()})
	return v.(*memLedger), nil
}

// memLedger is a memory allocator as a config.Ledger.
type memLedger struct{ *sequence.MemoryAllocator }

func (*memLedger) Ping(context.Context) error { return nil }

func (l *memLedger) Leaser() (snowflake.Leaser, error) {
	return snowflake.NewRecordLeaser(l.Records(), "snowflake")
}

func init() { config.RegisterLedger("memtest", memLedgerDriver{}) }

// A ledger is a value: redis, redis-strict and snowflake serve from a
// ledger of a scheme registered by a driver they have never heard of, and
// keep their promises over it. Redis emptied between two Builds costs a
// gap, never a repeat, because the ranges come from the ledger.
func TestLedgerIsAValue(t *testing.T) {
	srv := redistest.Start(t, redistest.Persistent())
	url := "redis://" + srv.Addr() + "/0"
	cfg := &config.Config{
		Templates: map[string]config.Template{
			"a": {Template: "A@<seq>", Sequence: config.Sequence{Backend: "redis", Step: 10, Options: config.Options{"url": url, "prefix": "a:", "ledger": "memtest://shop"}}},
			"s": {Template: "S@<seq>", Sequence: config.Sequence{Backend: "redis-strict", Step: 10, Options: config.Options{"url": url, "prefix": "s:", "ledger": "memtest://shop"}}},
			"f": {Template: "F@<seq>", Sequence: config.Sequence{Backend: "snowflake", Options: config.Options{"ledger": "memtest://shop"}}},
		},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "s"} {
		st, err := cfg.StoreInfo(name)
		if err != nil || !strings.HasSuffix(st.ID, " ledger memtest://shop") {
			t.Errorf("StoreInfo(%s) = %q, %v; want the ledger's ID at its end", name, st.ID, err)
		}
	}
	seen := map[string]int{}
	for run := range 2 {
		set, err := cfg.Build(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "s", "f"} {
			for _, n := range issue(t, set, name, 25) {
				seen[n]++
			}
		}
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
		if run == 0 {
			// Redis loses everything: the ledger still has what it handed out.
			if err := srv.Client(t).FlushAll(t.Context()).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	repeats := 0
	for n, c := range seen {
		if c > 1 {
			repeats++
			t.Errorf("%s issued %d times", n, c)
		}
	}
	if len(seen) != 150 || repeats != 0 {
		t.Errorf("%d distinct numbers of 150, %d repeated", len(seen), repeats)
	}
	// The control: each Build given a ledger of its own, as if the ledger
	// lost what it handed out, with Redis emptied between them, repeats.
	control := map[string]int{}
	for run := range 2 {
		lost := &config.Config{Templates: map[string]config.Template{
			"a": {Template: "A@<seq>", Sequence: config.Sequence{Backend: "redis", Step: 10, Options: config.Options{"url": url, "prefix": "c:", "ledger": fmt.Sprintf("memtest://lost-%d", run)}}},
		}}
		set, err := lost.Build(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range issue(t, set, "a", 25) {
			control[n]++
		}
		set.Close()
		if err := srv.Client(t).FlushAll(t.Context()).Err(); err != nil {
			t.Fatal(err)
		}
	}
	controlRepeats := 0
	for _, c := range control {
		if c > 1 {
			controlRepeats++
		}
	}
	if controlRepeats == 0 {
		t.Errorf("the control repeats nothing: the count cannot see a repeat")
	}
	t.Logf("150 numbers over one ledger through a Redis emptied: 0 repeated; the control, a ledger lost: %d of 50 repeated", controlRepeats)

	// The worker id was leased in the ledger's records.
	v, _ := memLedgers.Load("memtest://shop")
	recs, err := v.(*memLedger).Records().Scan(t.Context(), "", "\xff", 0)
	if err != nil {
		t.Fatal(err)
	}
	var leases int
	for _, r := range recs {
		if strings.Contains(r.Key, "snowflake") {
			leases++
		}
	}
	if leases == 0 {
		t.Errorf("no snowflake record in the ledger: %d records", len(recs))
	}
}
