package server_test

import (
	"strings"

	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sngen/sn/config"
	"github.com/sngen/sn/server"
)

// The serve section is read, and each of its problems named with its line.
func TestServeSection(t *testing.T) {
	cfg, err := config.Decode([]byte(`templates:
  a: {template: "A@<seq>"}
serve:
  listen: 0.0.0.0:9000
  tokens_env: MY_TOKENS
  tokens_file: tokens.txt
  tls_cert: cert.pem
  tls_key: key.pem
  max_body: 4096
`), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := server.Settings{Listen: "0.0.0.0:9000", TokensEnv: "MY_TOKENS", TokensFile: "tokens.txt", TLSCert: "cert.pem", TLSKey: "key.pem", MaxBody: 4096}
	if got, err := server.SettingsOf(cfg); !cmp.Equal(got, want) || err != nil {
		t.Errorf("SettingsOf = %+v, %v; want %+v", got, err, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	bad, err := config.Decode([]byte(`templates:
  a: {template: "A@<seq>"}
serve:
  listen: "9000"
  tokens_env: "MY-TOKENS"
  tls_cert: cert.pem
  max_body: -1
`), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Validate(); err != nil {
		t.Errorf("Validate checks the templates, not the serve section: %v", err)
	}
	_, err = server.SettingsOf(bad)
	for _, want := range []string{
		`line 4: serve.listen: "9000": want HOST:PORT`,
		`line 5: serve.tokens_env: "MY-TOKENS": want the name of an environment variable`,
		`line 6: serve.tls_cert: tls_cert without tls_key: give both, or neither`,
		`line 7: serve.max_body: -1: want a positive size`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SettingsOf: %v\nwant it to say %s", err, want)
		}
	}
	// The line of the one given, whichever it is; a port out of range.
	other, _ := config.Decode([]byte("templates:\n  a: {template: \"A@<seq>\"}\nserve:\n  listen: \":99999\"\n  tls_key: key.pem\n"), "yaml")
	_, err = server.SettingsOf(other)
	for _, want := range []string{
		`line 4: serve.listen: ":99999": port "99999" is not a TCP port`,
		`line 5: serve.tls_key: tls_key without tls_cert`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SettingsOf: %v\nwant it to say %s", err, want)
		}
	}
	typo, _ := config.Decode([]byte("templates:\n  a: {template: \"A@<seq>\"}\nserve:\n  lisen: 0.0.0.0:9000\n  max_body: lots\n"), "yaml")
	_, err = server.SettingsOf(typo)
	for _, want := range []string{
		`line 4: serve.lisen: unknown field (known: listen, max_body, tls_cert, tls_key, token_grace, tokens, tokens_env, tokens_file); did you mean listen?`,
		`line 5: serve.max_body: want a whole number, found "lots"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SettingsOf: %v\nwant it to say %s", err, want)
		}
	}
}
