package config

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
)

// Redact returns a store's URL (or a key=value DSN) with its password
// hidden, in the user information and in a password parameter, for
// messages and store IDs. It hides it even in a URL that does not parse.
func Redact(rawURL string) string {
	if !strings.Contains(rawURL, "://") {
		return passwordParam.ReplaceAllString(rawURL, "${1}xxxxx")
	}
	if !passwordParam.MatchString(rawURL) && !hasPassword(rawURL) {
		return rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil || strings.Contains(u.Host, ",") {
		return passwordParam.ReplaceAllString(redactUser(rawURL), "${1}xxxxx")
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// passwordParam matches a password given as a parameter.
var passwordParam = regexp.MustCompile(`(?i)(password=)[^\s&]*`)

// hasPassword reports whether the user information of rawURL has a
// password.
func hasPassword(rawURL string) bool {
	_, rest, _ := strings.Cut(rawURL, "://")
	at := strings.LastIndex(rest, "@")
	return at >= 0 && strings.Contains(rest[:at], ":")
}

// redactUser hides the password in the user information of rawURL,
// without parsing it.
func redactUser(rawURL string) string {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return rawURL
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return rawURL
	}
	if user, _, hasPw := strings.Cut(rest[:at], ":"); hasPw {
		return scheme + "://" + user + ":xxxxx" + rest[at:]
	}
	return rawURL
}

// URLSyntax returns err, an error of parsing rawURL, so that it shows no
// part of rawURL's password: when the parser's message quotes any three
// bytes in a row of the user information (in "redis://:pa/ss@host" it
// reads "pa" as a port), it is replaced by one that quotes nothing.
func URLSyntax(rawURL string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	_, rest, _ := strings.Cut(rawURL, "://")
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return err
	}
	userinfo, msg := rest[:at], err.Error()
	for i := 0; i+3 <= max(len(userinfo), 3); i++ {
		if strings.Contains(msg, userinfo[i:min(i+3, len(userinfo))]) {
			return errors.New(`not a valid URL; in the user and password, write "/" "?" "#" "@" "%" ":" as %2F %3F %23 %40 %25 %3A`)
		}
	}
	return err
}
