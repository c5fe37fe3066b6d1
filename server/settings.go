package server

import (
	"errors"
	"fmt"
	"net"
	"regexp"

	"github.com/sngen/sn/config"
)

// Settings are sn serve's own settings, written in the serve section of
// its config file. Like the obfuscation keys, bearer tokens never go in
// the file: it names where they are. sn serve's flags override them.
type Settings struct {
	// Listen is the address to listen on, HOST:PORT. Without tokens it
	// must be a loopback address. Default: 127.0.0.1:8080.
	Listen string `yaml:"listen"`

	// TokensEnv is the environment variable that holds the bearer tokens,
	// separated by commas or white space, each at least 16 bytes.
	// Default: SN_TOKENS.
	TokensEnv string `yaml:"tokens_env"`

	// TokensFile is a file of bearer tokens, one per line (a line that
	// starts with "#" is a comment), relative to the config file's
	// directory: a mounted secret. Its tokens are added to TokensEnv's.
	TokensFile string `yaml:"tokens_file"`

	// TLSCert and TLSKey are the PEM files of the certificate and its
	// key, relative to the config file's directory: with them, sn serve
	// speaks HTTPS only.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`

	// MaxBody is the largest request body, in bytes. Default: 1 MiB.
	MaxBody int64 `yaml:"max_body"`
}

// SettingsOf reads the serve section of cfg: each problem is a
// *config.Error with its line, joined.
func SettingsOf(cfg *config.Config) (Settings, error) {
	var s Settings
	if err := cfg.DecodeServe(&s); err != nil {
		return s, err
	}
	var errs []error
	bad := func(field, format string, a ...any) {
		e := &config.Error{Field: "serve." + field, Err: fmt.Errorf("serve."+field+": "+format, a...)}
		cfg.Locate(e)
		errs = append(errs, e)
	}
	if s.Listen != "" {
		if _, port, err := net.SplitHostPort(s.Listen); err != nil || port == "" {
			bad("listen", "%q: want HOST:PORT, such as 127.0.0.1:8080", s.Listen)
		} else if _, err := net.LookupPort("tcp", port); err != nil {
			bad("listen", "%q: port %q is not a TCP port (0 to 65535, or a service name)", s.Listen, port)
		}
	}
	if s.TokensEnv != "" && !envName.MatchString(s.TokensEnv) {
		bad("tokens_env", "%q: want the name of an environment variable, such as SN_TOKENS", s.TokensEnv)
	}
	switch {
	case s.TLSCert != "" && s.TLSKey == "":
		bad("tls_cert", "tls_cert without tls_key: give both, or neither")
	case s.TLSCert == "" && s.TLSKey != "":
		bad("tls_key", "tls_key without tls_cert: give both, or neither")
	}
	if s.MaxBody < 0 {
		bad("max_body", "%d: want a positive size in bytes", s.MaxBody)
	}
	return s, errors.Join(errs...)
}

// envName matches the name of an environment variable.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
