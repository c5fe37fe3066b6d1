package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// defaultHealthURL is what sn health asks when --url is not given: the
// readiness of an sn serve on its usual port on this machine, as a
// container's health check runs it.
const defaultHealthURL = "http://127.0.0.1:8080/readyz"

// cmdHealth asks a running sn serve whether it is ready, and exits 0 when
// it answers 200: the health check of a container whose image has no shell
// and no curl, or of a service manager.
func cmdHealth(e *env, args []string) error {
	f := newFlags("health")
	raw := f.fs.String("url", defaultHealthURL, "")
	timeout := f.fs.Duration("timeout", 5*time.Second, "")
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("health", "unexpected argument %q (give the address as --url %s)", pos[0], defaultHealthURL)
	}
	u, err := url.Parse(*raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("health", "--url %q: want an http or https URL such as %s", *raw, defaultHealthURL)
	}
	if *timeout <= 0 {
		return usagef("health", "--timeout %v: want a positive duration such as 5s", *timeout)
	}
	ctx, cancel := context.WithTimeout(e.ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return usagef("health", "--url %q: %v", *raw, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: no answer: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	text := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", u.Redacted(), resp.Status, text)
	}
	fmt.Fprintf(e.out, "%s: %s %s\n", u.Redacted(), resp.Status, text)
	return nil
}
