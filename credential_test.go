package memstore_test

import (
	"strings"
	"testing"

	"github.com/memstore/memstore"
)

func TestFindCredential(t *testing.T) {
	// Test credentials are assembled from parts so that this file does not
	// itself look like it leaks any.
	j := func(parts ...string) string { return strings.Join(parts, "") }
	for _, tc := range []struct {
		text, kind string
	}{
		{j("-----BEGIN ", "RSA PRIVATE KEY-----\nMIIE..."), "private key"},
		{j("-----BEGIN ", "OPENSSH PRIVATE KEY-----"), "private key"},
		{j("-----BEGIN ", "PRIVATE KEY-----"), "private key"},
		{j("key=sk-ant-", "api03-", strings.Repeat("a1B2", 10)), "Anthropic API key"},
		{j("sk-", "proj-", strings.Repeat("Xy9", 16)), "OpenAI API key"},
		{j("id AKIA", "IOSFODNN7EXAMPLE here"), "AWS access key ID"},
		{j("aws_secret_access_key = ", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"), "AWS secret access key"},
		{j("ghp_", strings.Repeat("A1b2C3", 6)), "GitHub token"},
		{j("github_pat_", strings.Repeat("A1_b", 8)), "GitHub token"},
		{j("glpat-", strings.Repeat("x1Y2", 5)), "GitLab token"},
		{j("xoxb-", "123456789012-abcdefABCDEF"), "Slack token"},
		{j("AIza", strings.Repeat("Sy", 17), "A"), "Google API key"},
		{j("sk_live_", strings.Repeat("4eC3", 6)), "Stripe secret key"},
		{j("npm_", strings.Repeat("aB3", 12)), "npm token"},
		{j("eyJhbGciOiJIUzI1NiJ9", ".eyJzdWIiOiIxMjM0NTY3ODkwIn0", ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"), "JSON Web Token"},
		{j("postgres://app:", "hunter2@db.internal:5432/app"), "password in a URL"},
		{j("-----BEGIN ", "ENCRYPTED PRIVATE KEY-----"), "private key"},
		{j("-----BEGIN PGP ", "PRIVATE KEY BLOCK-----"), "private key"},
		{j("---- BEGIN SSH2 ENCRYPTED ", "PRIVATE KEY ----\nComment: me"), "private key"},
		{j("PuTTY-User-", "Key-File-3: ssh-ed25519\nEncryption: none"), "PuTTY private key"},
		{j("(protected-", "private-key (ecc (curve Ed25519)"), "GnuPG private key"},
		{j("AGE-SECRET-", "KEY-1", strings.Repeat("QZ", 29)), "age secret key"},
		{j("machine example.com ", "login me password s3cret"), "netrc entry"},
		{j("machine example.com\n\tlogin me\n\tpassword s3cret"), "netrc entry"},
		{j("default password ", "s3cret login anonymous"), "netrc entry"},
		{j("  machine ftp.example.com port 21 login me account x password s3cret"), "netrc entry"},
		{j("//registry.npmjs.org/:_auth", "Token=abc123"), "npm registry credential"},
		{j("_auth = ", "bWU6czNjcmV0"), "npm registry credential"},
	} {
		kind, found := memstore.FindCredential("some notes\n" + tc.text + "\nmore notes")
		if !found || kind != tc.kind {
			t.Errorf("Find(%q) = %q, %v; want %q", tc.text, kind, found, tc.kind)
		}
	}
	for _, text := range []string{
		"The user prefers tabs. API keys live in the vault, never in memory.",
		"sk-short", "ghp_tooShort", "AKIA lowercase akiaiosfodnn7example",
		"https://example.com/path?x=1", "mailto:someone@example.com", "user@host:path",
		"-----BEGIN PUBLIC KEY-----", "eyJ only one part", "password: see the vault",
		"machine learning password manager", "the machine example.com has a login page",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMine me@laptop", "---- BEGIN SSH2 PUBLIC KEY ----",
		"set _auth in .npmrc, never here", "(public-key (ecc))",
	} {
		if kind, found := memstore.FindCredential(text); found {
			t.Errorf("Find(%q) = %q, want nothing", text, kind)
		}
	}
}
