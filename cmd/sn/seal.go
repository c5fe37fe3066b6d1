package main

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/sngen/sn/sequence/journal"
)

// sealKeys registers --public-key, the keys whose prune seals the
// command trusts.
func (f *flags) sealKeys() *[]ed25519.PublicKey {
	var keys []ed25519.PublicKey
	f.fs.Func("public-key", "", func(path string) error {
		pub, err := readPublicKey(path)
		if err != nil {
			return err
		}
		keys = append(keys, pub)
		return nil
	})
	return &keys
}

// readPublicKey reads an Ed25519 public key from a PEM file, as sn
// keygen writes it.
func readPublicKey(path string) (ed25519.PublicKey, error) {
	return readKey[ed25519.PublicKey](path, "PUBLIC KEY", x509.ParsePKIXPublicKey)
}

// readPrivateKey reads an Ed25519 private key from a PEM file, as sn
// keygen writes it.
func readPrivateKey(path string) (ed25519.PrivateKey, error) {
	return readKey[ed25519.PrivateKey](path, "PRIVATE KEY", x509.ParsePKCS8PrivateKey)
}

// readKey reads the PEM block kind of the file at path, parses it and
// wants a K.
func readKey[K any](path, kind string, parse func([]byte) (any, error)) (K, error) {
	var zero K
	b, err := os.ReadFile(path)
	if err != nil {
		return zero, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != kind {
		return zero, fmt.Errorf("%s: want a PEM %q block, as sn keygen writes it", path, kind)
	}
	k, err := parse(blk.Bytes)
	if err != nil {
		return zero, fmt.Errorf("%s: %v", path, err)
	}
	key, ok := k.(K)
	if !ok {
		return zero, fmt.Errorf("%s: a %T key, want Ed25519 (sn keygen makes one)", path, k)
	}
	return key, nil
}

// cmdKeygen makes the key pair that signs prunes: the private key for
// sn prune, kept away from the store; the public key for the auditor.
func cmdKeygen(e *env, args []string) error {
	f := newFlags("keygen")
	out := f.fs.String("out", "sn-seal", "")
	pos, err := f.parse(args)
	if err != nil {
		return helpOr(e, f.cmd, err)
	}
	if len(pos) > 0 {
		return usagef(f.cmd, "unexpected %q: give the files' prefix with --out", pos[0])
	}
	pub, sk, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	skDER, err := x509.MarshalPKCS8PrivateKey(sk)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return err
	}
	for _, w := range []struct {
		path, kind string
		der        []byte
		perm       os.FileMode
	}{{*out + ".key", "PRIVATE KEY", skDER, 0o600}, {*out + ".pub", "PUBLIC KEY", pubDER, 0o644}} {
		fh, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, w.perm)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s exists: sn keygen never overwrites a key (a prune signed with it would no longer verify); choose another --out", w.path)
		}
		if err != nil {
			return err
		}
		if err := pem.Encode(fh, &pem.Block{Type: w.kind, Bytes: w.der}); err != nil {
			fh.Close()
			return err
		}
		if err := fh.Close(); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.out, "key %s: %s.key signs prunes (keep it away from the store's writers); %s.pub checks them (give it to the auditor)\n",
		journal.KeyID(pub), *out, *out)
	return nil
}
