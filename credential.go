package memstore

// The recognition of text that looks like a credential, so that memstore
// keeps credentials out of memory: the server refuses such content
// (ContentRules), and directory sync, the memory tool and memdir's lint
// never upload or write it. It favours precision: each pattern matches a
// documented token format or an unmistakable shape, so a refusal is
// rarely a false alarm. It never returns the matched text.

import "regexp"

// A kind of credential and how to recognise it. Order matters where
// formats overlap: the more specific comes first.
var credentialKinds = []struct {
	name string
	re   *regexp.Regexp
}{
	// PEM (PKCS#1, PKCS#8, OpenSSH, PGP) and RFC 4716 ("---- BEGIN SSH2
	// ENCRYPTED PRIVATE KEY ----") armour.
	{"private key", regexp.MustCompile(`-{4,5} ?BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}`)},
	{"PuTTY private key", regexp.MustCompile(`\bPuTTY-User-Key-File-\d+:`)},
	{"GnuPG private key", regexp.MustCompile(`\((?:protected-)?private-key\s*\(`)},
	{"age secret key", regexp.MustCompile(`\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b`)},
	// A .netrc (or _netrc) entry: a machine, or default, with both a login
	// and a password, in either order, other tokens between.
	{"netrc entry", regexp.MustCompile(`(?m)^[ \t]*(?:machine[ \t]+\S+|default)(?:\s+(?:account|port)\s+\S+)*` +
		`(?:\s+login\s+\S+(?:\s+(?:account|port)\s+\S+)*\s+password\s+\S+|\s+password\s+\S+(?:\s+(?:account|port)\s+\S+)*\s+login\s+\S+)`)},
	// An .npmrc's token, password or basic credential for a registry.
	{"npm registry credential", regexp.MustCompile(`(?m)^[ \t]*(?:\S*:)?_(?:authToken|auth|password)[ \t]*=[ \t]*\S+`)},
	{"Anthropic API key", regexp.MustCompile(`\bsk-ant-[a-z]+\d*-[A-Za-z0-9_-]{20,}`)},
	{"OpenAI API key", regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}`)},
	{"AWS access key ID", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`)},
	{"AWS secret access key", regexp.MustCompile(`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}\b`)},
	{"GitHub token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`)},
	{"GitLab token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	{"Slack token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{"Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{"Stripe secret key", regexp.MustCompile(`\b(?:sk|rk)_live_[0-9A-Za-z]{24,}`)},
	{"npm token", regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{"JSON Web Token", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{"password in a URL", regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:[^/\s@]+@[^/\s@]+`)},
}

// FindCredential reports the kind of the first credential found in text,
// if any.
func FindCredential(text string) (kind string, found bool) {
	for _, k := range credentialKinds {
		if k.re.MatchString(text) {
			return k.name, true
		}
	}
	return "", false
}
