// Package claudeproxy is the loopback HTTPS proxy that lets a Claude Code
// build whose memory host is fixed to api.anthropic.com keep its team
// memory on a memstore server.
//
// The proxy answers CONNECT. For the memory host alone it terminates TLS
// with a certificate from a local certificate authority, sends requests
// under /v1/memory_stores/<configured store> to memstore and every other
// request to the real host over TLS, unchanged. Every other host is
// tunnelled byte for byte. Nothing of a request's body or credentials is
// logged.
package claudeproxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/memstore/memstore/internal/private"
)

// MemoryHost is the host whose memory routes the proxy answers: the one
// Claude Code's memory client calls.
const MemoryHost = "api.anthropic.com"

// The files of the certificate authority in memstore's data directory.
const (
	CACertFile = "claude-ca.pem"
	CAKeyFile  = "claude-ca.key" // 0600
)

const (
	// caLifetime is how long the authority is valid; a new one is made
	// when it has less than caRenewBefore left.
	caLifetime    = 5 * 365 * 24 * time.Hour
	caRenewBefore = 30 * 24 * time.Hour
	// leafLifetime is how long a proxy's certificate for the memory host
	// is valid: a proxy runs for one Claude Code session and makes a new
	// one each time it starts.
	leafLifetime = 30 * 24 * time.Hour
)

// CA is the local certificate authority. It may sign certificates for
// MemoryHost only: its name constraints say so, and TLS clients that check
// name constraints (Go's, OpenSSL's, BoringSSL's) refuse any other name it
// signs, should its key ever leak.
type CA struct {
	Cert     *x509.Certificate
	CertFile string // the PEM file to give a client (NODE_EXTRA_CA_CERTS)
	key      *ecdsa.PrivateKey
}

// LoadCA returns the authority kept in dir, making it (and dir) first
// when there is none, or when the one there is about to expire.
func LoadCA(dir string) (*CA, error) {
	certFile, keyFile := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	ca, err := readCA(certFile, keyFile)
	switch {
	case err == nil && time.Until(ca.Cert.NotAfter) > caRenewBefore:
		return ca, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if err := os.MkdirAll(dir, private.DirMode); err != nil {
		return nil, err
	}
	ca, keyPEM, err := newCA()
	if err != nil {
		return nil, err
	}
	ca.CertFile = certFile
	// The key first: a certificate without its key is useless.
	if err := private.WriteFile(keyFile, keyPEM); err != nil {
		return nil, err
	}
	if err := private.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})); err != nil {
		return nil, err
	}
	return ca, nil
}

func readCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	if err := private.Restrict(keyFile); err != nil {
		return nil, err
	}
	bad := func(what string) error {
		return fmt.Errorf("%s is not memstore's certificate authority (%s); remove %s and %s to make a new one", certFile, what, certFile, keyFile)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, bad("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, bad(err.Error())
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, bad(err.Error())
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, bad("the key is not the certificate's")
	}
	if !cert.IsCA || !slices.Equal(cert.PermittedDNSDomains, []string{MemoryHost}) || !cert.PermittedDNSDomainsCritical {
		return nil, bad("not limited to " + MemoryHost)
	}
	return &CA{Cert: cert, CertFile: certFile, key: key}, nil
}

// newCA makes an authority and returns it with its key in PEM.
func newCA() (*CA, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "memstore local CA for " + MemoryHost, Organization: []string{"memstore"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caLifetime),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// The memory host only, and no IP address at all.
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         []string{MemoryHost},
		ExcludedIPRanges: []*net.IPNet{
			{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)},
			{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)},
		},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return &CA{Cert: cert, key: key}, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// Pool is a certificate pool holding the authority alone.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// issue makes a certificate for host with a fresh key. The proxy asks only
// for MemoryHost; tests ask for others to see clients refuse them.
func (ca *CA) issue(host string) (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	notAfter := now.Add(leafLifetime)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der, ca.Cert.Raw}, PrivateKey: key}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand never fails on supported systems
	}
	return n
}
