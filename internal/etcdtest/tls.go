package etcdtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TLSFiles are the PEM files of a cluster started by [StartTLS]: the
// certificate authority that signed the members' and the client's
// certificates, and the client's certificate and key.
type TLSFiles struct {
	CA, Cert, Key string
}

// StartTLS starts a cluster of the test's own, like [Start], whose members
// serve clients over TLS only and ask each for a certificate their
// authority signed (--client-cert-auth). Its ClientURLs are https; its
// Client uses the files.
func StartTLS(tb testing.TB) (*Cluster, TLSFiles) {
	tb.Helper()
	e := harness.Env(tb)
	dir, err := os.MkdirTemp(e.root, "tls-")
	if err != nil {
		tb.Fatalf("etcdtest: %v", err)
	}
	files, err := makeCerts(dir)
	if err != nil {
		tb.Fatalf("etcdtest: making certificates: %v", err)
	}
	c, err := e.newCluster(false, &files)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(func() { c.stop(); os.RemoveAll(dir) })
	return c, files
}

// clientTLS returns the TLS configuration of a client of the cluster.
func (f *TLSFiles) clientTLS() (*tls.Config, error) {
	ca, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// makeCerts writes a certificate authority, a certificate for the members
// (127.0.0.1) and one for a client into dir.
func makeCerts(dir string) (TLSFiles, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return TLSFiles{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "etcdtest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return TLSFiles{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return TLSFiles{}, err
	}
	files := TLSFiles{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "client.pem"), Key: filepath.Join(dir, "client-key.pem")}
	if err := writePEM(files.CA, "CERTIFICATE", caDER); err != nil {
		return TLSFiles{}, err
	}
	for i, leaf := range []struct {
		name, cert, key string
		usage           []x509.ExtKeyUsage
		ips             []net.IP
	}{
		{"etcdtest member", "server.pem", "server-key.pem", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, []net.IP{net.ParseIP("127.0.0.1")}},
		{"sn", "client.pem", "client-key.pem", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil},
	} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return TLSFiles{}, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: leaf.name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: leaf.usage, IPAddresses: leaf.ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return TLSFiles{}, err
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return TLSFiles{}, err
		}
		if err := writePEM(filepath.Join(dir, leaf.cert), "CERTIFICATE", der); err != nil {
			return TLSFiles{}, err
		}
		if err := writePEM(filepath.Join(dir, leaf.key), "EC PRIVATE KEY", kder); err != nil {
			return TLSFiles{}, err
		}
	}
	return files, nil
}

func writePEM(path, kind string, der []byte) error {
	b := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
