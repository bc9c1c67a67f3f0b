package main_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// to dir as PEM files, and returns their paths and the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "engram test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

// TestServeTLS: with --tls-cert and ENGRAM_TLS_KEY the server speaks
// HTTPS to a client trusting its certificate, and not plain HTTP.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	certFile, keyFile, cert := selfSigned(t, t.TempDir())
	s := startServer(t, t.TempDir(), append(baseEnv(t), "ENGRAM_TLS_KEY="+keyFile), "--tls-cert", certFile)
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("logged URL %q, want https://", s.url)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, path := range []string{"/healthz", "/v1/memories?org=o&project=p"} {
		resp, err := client.Get(s.url + path)
		if err != nil {
			t.Fatalf("GET %s over HTTPS: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.TLS == nil {
			t.Errorf("GET %s: status %d, TLS %v; want 200 over TLS", path, resp.StatusCode, resp.TLS != nil)
		}
	}

	plain := &http.Client{Timeout: 10 * time.Second}
	resp, err := plain.Get("http://" + strings.TrimPrefix(s.url, "https://") + "/healthz")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS port: status %d, want 400", resp.StatusCode)
		}
	}
	if _, err := http.Get(s.url + "/healthz"); err == nil {
		t.Error("a client not trusting the certificate connected")
	}
}

func TestServeBadTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile, _ := selfSigned(t, dir)
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--tls-cert", certFile}, 2, []string{"--tls-key"}},
		{[]string{"--tls-key", keyFile}, 2, []string{"--tls-cert"}},
		{[]string{"--tls-cert", missing, "--tls-key", keyFile}, 1, []string{"--tls-cert", missing}},
		{[]string{"--tls-cert", garbage, "--tls-key", keyFile}, 1, []string{"--tls-cert", garbage}},
		{[]string{"--tls-cert", certFile, "--tls-key", garbage}, 1, []string{"--tls-key", garbage}},
		{[]string{"--tls-cert", certFile, "--tls-key", certFile}, 1, []string{"--tls-key", certFile}},
	} {
		c := &cli{t: t, env: baseEnv(t)}
		stderr := c.fail(tc.code, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--no-auth"}, tc.args...)...)
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr = %q, want it to name %s", tc.args, stderr, w)
			}
		}
	}
}
