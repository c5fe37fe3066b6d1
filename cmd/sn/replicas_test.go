package main

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sngen/sn/internal/pgtest"
)

// Two sn serve replicas of one config on one ledger hand out blocks to
// client processes of both: no number is printed twice. A third sn serve,
// of another team's config on the same ledger, whose template prints the
// same strings from another counter, is refused at start, naming the
// template it collides with, before it listens. The control is that
// config on a store of its own: it starts, and its clients print numbers
// the replicas' clients printed too.
func TestServeReplicasOneLedger(t *testing.T) {
	ledger := pgtest.Shared(t).NewDatabase(t)
	dir := t.TempDir()
	const token = "replica-app-0123456789abcdef"
	writeConfig(t, dir, "tokens", "app="+token+"\n")
	config := func(name, store, tpl string) string {
		return writeConfig(t, dir, name, fmt.Sprintf(`
store: %s
templates:
  orders: {template: %q}
serve:
  tokens_file: tokens
  tokens: [{id: app, actions: [issue]}]
`, store, tpl))
	}
	const (
		orders = "SN-@<seq, width=8>-@<checksum, algo=luhn>"
		clash  = "@<ownerKey, value=SN>-@<seq, width=8>-@<checksum, algo=luhn>" // the same strings, another counter
	)
	onLedger := fmt.Sprintf("{backend: sql, ledger: %q, step: 20}", ledger)
	replicas := config("replicas.yaml", onLedger, orders)
	a, b := startServe(t, nil, "--config", replicas), startServe(t, nil, "--config", replicas)

	// The other team's config: refused before it listens.
	cmd := snCommand(t, nil, "serve", "--listen", "127.0.0.1:0", "--config", config("other.yaml", onLedger, clash))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		for _, want := range []string{"collides with", orders} {
			if err == nil || !strings.Contains(stderr.String(), want) {
				t.Errorf("the colliding config: %v, and its refusal does not say %q:\n%s", err, want, stderr.String())
			}
		}
		if strings.Contains(stderr.String(), "listening") {
			t.Errorf("the colliding config listened before it was refused:\n%s", stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the colliding config was not refused: sn serve is running:\n%s", stderr.String())
	}

	// Clients of both replicas.
	cs := &clients{t: t}
	for i := range 6 {
		url := a.url
		if i%2 == 1 {
			url = b.url
		}
		cs.env = []string{remoteClientEnv + "=" + url, "SN_RC_TOKEN=" + token, "SN_RC_TEMPLATE=orders"}
		cs.start()
	}
	printed := func(cs *clients, n int) bool {
		return within(60*time.Second, func() bool { total, _, _ := cs.count(); return total >= n })
	}
	if !printed(cs, 3000) {
		t.Fatalf("the clients of the replicas printed too few numbers: %s", cs.all[0].errs.String())
	}
	stop := func(cs *clients) {
		for _, p := range cs.all {
			p.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range cs.all {
			<-p.done
		}
	}
	stop(cs)
	total, repeats, first := cs.count()
	t.Logf("2 replicas on one ledger, 6 client processes: %d numbers, repeats: %d", total, repeats)
	if repeats != 0 {
		t.Errorf("%d numbers printed twice, such as %s", repeats, first)
	}

	// The control: the other config on a store of its own starts, and
	// its clients print what the replicas' clients printed.
	own := startServe(t, nil, "--config", config("own.yaml", "{backend: bolt, path: own.db, step: 20}", clash))
	ctl := &clients{t: t, env: []string{remoteClientEnv + "=" + own.url, "SN_RC_TOKEN=" + token, "SN_RC_TEMPLATE=orders"}}
	ctl.start()
	if !printed(ctl, 500) {
		t.Fatalf("the control's client printed too few numbers: %s", ctl.all[0].errs.String())
	}
	stop(ctl)
	ctl.all = append(ctl.all, cs.all...)
	_, repeats, first = ctl.count()
	t.Logf("the control, the colliding template on a store of its own: repeats with the replicas' numbers: %d, such as %s", repeats, first)
	if repeats == 0 {
		t.Error("the control printed no number the replicas' clients printed: the count cannot see a repeat")
	}
}
