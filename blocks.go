package sn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sngen/sn/checksum"
	"github.com/sngen/sn/internal/builtin"
	"github.com/sngen/sn/internal/engine"
	"github.com/sngen/sn/sequence"
)

// CheckKey returns nil when key is a counter key that the Generator's
// first sequence part draws from for some request, as [Generator.Key]
// returns them: its base, key= variable and period as the template has
// them, a variable's value within the variable's limits. Otherwise it
// returns an error wrapping sequence.ErrInvalidArgument that says which
// component of key is wrong. A service that hands out blocks of a
// template's counters to clients checks each key asked for with it, so
// that a client of one template takes nothing of another's counters.
func (g *Generator) CheckKey(key string) error {
	parts := g.plan.Parts()
	for i := range parts {
		if parts[i].Kind == engine.Seq {
			if err := g.plan.CheckKey(&parts[i], key); err != nil {
				return fmt.Errorf("sn: %w: %w", sequence.ErrInvalidArgument, err)
			}
			return nil
		}
	}
	return fmt.Errorf("sn: %s has no sequence: %w", g.plan.Source(), sequence.ErrInvalidArgument)
}

// Portable returns nil when another process can print the Generator's
// numbers from blocks of its counters (package remote), and otherwise
// why not: a template with obfuscate= (its key stays with the service),
// a counter that expires by the store's clock (reset=hour, minute or
// second), or more than one sequence part.
func (g *Generator) Portable() error {
	seqs := 0
	for _, p := range g.plan.Parts() {
		if p.Kind != engine.Seq {
			continue
		}
		seqs++
		switch {
		case p.Obfuscate != "":
			return fmt.Errorf("sn: %s: obfuscate=%s: its key stays with the service, so only the service prints its numbers: %w", g.plan.Source(), p.Obfuscate, errors.ErrUnsupported)
		case p.Reset == builtin.Hour || p.Reset == builtin.Minute || p.Reset == builtin.Second:
			return fmt.Errorf("sn: %s: reset=%s: its counters expire by the store's clock, which another process cannot read: %w", g.plan.Source(), p.Reset, errors.ErrUnsupported)
		}
	}
	if seqs != 1 {
		return fmt.Errorf("sn: %s: %d sequence parts; blocks are of one counter: %w", g.plan.Source(), seqs, errors.ErrUnsupported)
	}
	return nil
}

// Engine identifies how this build of sn renders numbers: a hash of the
// numbers a fixed set of templates prints with every built-in part (each
// checksum algorithm, dates in several zones and formats, radixes,
// alphabets, obfuscation, every reset period) for fixed counters and
// instants, such as "sn-engine-1f3a…". Two builds with equal Engines
// print the same numbers for the same template, counter and instant; a
// client that renders a service's numbers itself (package remote)
// compares its Engine with the service's, and refuses to issue when they
// differ.
func Engine() string {
	engineOnce.Do(func() { engineID = fingerprint() })
	return engineID
}

var (
	engineOnce sync.Once
	engineID   string
)

// fingerprint renders the corpus and hashes what it printed.
func fingerprint() string {
	corpus := []string{
		`SN-@<seq, width=8>`,
		`@<seq>`,
		`@<seq, width=4, overflow=grow>`,
		`@<date, format=yyyyMMddHHmmss>@<seq, width=5, reset=day>`,
		`@<date, format=yyMMdd, tz=Asia/Shanghai>@<seq, width=5, reset=day>`,
		`@<date, format=yyyy-MM, tz=America/New_York>/@<seq, width=4, reset=month>`,
		`@<date, format=yyyy, tz=Europe/Paris>-@<seq, reset=year>`,
		`W@<date, format=YYYY-ww>-@<seq, reset=week>`,
		`Q@<date, format=yyyy>-@<seq, reset=quarter>`,
		`H@<date, format=yyyyMMddHH>@<seq, width=3, reset=hour>`,
		`@<seq, width=7, radix=36>`,
		`@<seq, width=6, alphabet=ACDEFGHJKLMNPQRTUVWXY>`,
		`@<seq, width=10, obfuscate=fp>`,
		`@<area, chars=0-9, maxlen=3>-@<seq, width=5, key=area>`,
		`@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>`,
	}
	for _, a := range checksum.Names() {
		corpus = append(corpus, `C@<seq, width=9>@<checksum, algo=`+a+`>`, `C@<seq, width=9>@<checksum, algo=`+a+`, over=all>`)
	}
	instants := []time.Time{
		time.Date(2017, 3, 4, 10, 11, 12, 0, time.UTC),
		time.Date(2024, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2021, 1, 3, 0, 30, 0, 0, time.UTC),
	}
	h := sha256.New()
	for _, text := range corpus {
		fmt.Fprintf(h, "%s\n", text)
		for _, start := range []int64{1, 9, 10, 35, 36, 99999, 1234567} {
			g, err := New(text, WithSequence("seq", &counting{next: start}), WithObfuscation("fp", []byte("sn engine fingerprint key")))
			if err != nil {
				fmt.Fprintf(h, "error %v\n", err)
				break
			}
			for _, at := range instants {
				nums, err := g.Issue(context.Background(), Request{N: 2, At: at, Vars: map[string]string{"area": "010"}})
				fmt.Fprintf(h, "%q %v\n", nums, err)
			}
		}
	}
	return "sn-engine-" + hex.EncodeToString(h.Sum(nil)[:12])
}

// counting is a Gen that counts from next, whatever the key: the
// fingerprint's counter.
type counting struct {
	mu   sync.Mutex
	next int64
}

func (c *counting) Next(ctx context.Context, key string) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	return c.next - 1, nil
}
