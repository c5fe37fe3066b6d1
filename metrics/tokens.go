package metrics

import "github.com/prometheus/client_golang/prometheus"

// tokenFields are Metrics' fields for TokensRead: vectors without labels
// or with one, so that a program that never reads tokens again (one that
// is not sn serve) exports none of them.
type tokenFields struct {
	tokenReads  *prometheus.CounterVec
	tokensStale *prometheus.GaugeVec
}

func newTokenFields() tokenFields {
	return tokenFields{
		tokenReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sn_tokens_reads_total", Help: "Readings of the bearer tokens after the start (SIGHUP, or a changed config or tokens file), by result: ok or failed.",
		}, []string{"result"}),
		tokensStale: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sn_tokens_stale", Help: "1 when the last reading of the bearer tokens failed, so that the tokens in force are older than the files (a token meant to be revoked may still be accepted): alert on 1. 0 once a reading succeeds.",
		}, nil),
	}
}

// TokensRead reports a reading of the bearer tokens after the start: ok
// false when the files did not read and the tokens before stay in force.
// sn serve reports each: sn_tokens_reads_total and sn_tokens_stale.
func (m *Metrics) TokensRead(ok bool) {
	result, stale := "ok", 0.0
	if !ok {
		result, stale = "failed", 1
	}
	m.tokenReads.WithLabelValues(result).Inc()
	m.tokensStale.WithLabelValues().Set(stale)
}
