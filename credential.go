package memstore

// The recognition of text that looks like a credential, so that memstore
// keeps credentials out of memory: the server refuses such content
// (ContentRules), and directory sync, the memory tool and memdir's lint
// never upload or write it. It favours precision: each pattern matches a
// documented token format or an unmistakable shape, so a refusal is
// rarely a false alarm. It never returns the matched text.

import (
	"regexp"
	"slices"
	"strings"
)

// A kind of credential and how to recognise it. Order matters where
// formats overlap: the more specific comes first.
//
// Each names, in hints, strings one of which every match contains, so
// that the text is searched for those first, which is cheap, and the
// pattern runs only where one is present: memstore checks every write,
// and twenty patterns run over every content cost more than the write
// itself. A kind without hints (one matched case-insensitively) always
// runs.
var credentialKinds = []struct {
	name  string
	hints []string
	re    *regexp.Regexp
}{
	// PEM (PKCS#1, PKCS#8, OpenSSH, PGP) and RFC 4716 ("---- BEGIN SSH2
	// ENCRYPTED PRIVATE KEY ----") armour.
	{"private key", []string{"PRIVATE KEY"}, regexp.MustCompile(`-{4,5} ?BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}`)},
	{"PuTTY private key", []string{"PuTTY-User-Key-File-"}, regexp.MustCompile(`\bPuTTY-User-Key-File-\d+:`)},
	{"GnuPG private key", []string{"private-key"}, regexp.MustCompile(`\((?:protected-)?private-key\s*\(`)},
	{"age secret key", []string{"AGE-SECRET-KEY-1"}, regexp.MustCompile(`\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b`)},
	// A .netrc (or _netrc) entry: a machine, or default, with both a login
	// and a password, in either order, other tokens between.
	{"netrc entry", []string{"password"}, regexp.MustCompile(`(?m)^[ \t]*(?:machine[ \t]+\S+|default)(?:\s+(?:account|port)\s+\S+)*` +
		`(?:\s+login\s+\S+(?:\s+(?:account|port)\s+\S+)*\s+password\s+\S+|\s+password\s+\S+(?:\s+(?:account|port)\s+\S+)*\s+login\s+\S+)`)},
	// An .npmrc's token, password or basic credential for a registry.
	{"npm registry credential", []string{"_auth", "_password"}, regexp.MustCompile(`(?m)^[ \t]*(?:\S*:)?_(?:authToken|auth|password)[ \t]*=[ \t]*\S+`)},
	{"Anthropic API key", []string{"sk-ant-"}, regexp.MustCompile(`\bsk-ant-[a-z]+\d*-[A-Za-z0-9_-]{20,}`)},
	{"OpenAI API key", []string{"sk-"}, regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}`)},
	{"AWS access key ID", []string{"AKIA", "ASIA", "ABIA", "ACCA"}, regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`)},
	{"AWS secret access key", nil, regexp.MustCompile(`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}\b`)},
	{"GitHub token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`)},
	{"GitLab token", []string{"glpat-"}, regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	{"Slack token", []string{"xox"}, regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{"Google API key", []string{"AIza"}, regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{"Stripe secret key", []string{"_live_"}, regexp.MustCompile(`\b(?:sk|rk)_live_[0-9A-Za-z]{24,}`)},
	{"npm token", []string{"npm_"}, regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{"JSON Web Token", []string{"eyJ"}, regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{"password in a URL", []string{"://"}, regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:[^/\s@]+@[^/\s@]+`)},
}

// FindCredential reports the kind of the first credential found in text,
// if any.
func FindCredential(text string) (kind string, found bool) {
	for _, k := range credentialKinds {
		if k.hints != nil && !slices.ContainsFunc(k.hints, func(h string) bool { return strings.Contains(text, h) }) {
			continue
		}
		if k.re.MatchString(text) {
			return k.name, true
		}
	}
	return "", false
}
