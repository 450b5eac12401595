package localfile

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// MaxNameBytes is the longest file name most file systems take (255
// bytes on Linux and the BSDs, 255 UTF-16 units, never more bytes, on
// NTFS and APFS).
const MaxNameBytes = 255

// The longest absolute paths the systems' calls take, with the final NUL
// (PATH_MAX). A longer one could be made through the directory's handle,
// but no editor could open it.
const (
	pathMaxLinux   = 4096
	pathMaxWindows = 32_767 // with the \\?\ prefix Go adds to long paths
	pathMaxBSD     = 1024   // macOS and the BSDs
)

// MaxPathBytes is the longest absolute path a file may have on system
// goos (a GOOS value).
func MaxPathBytes(goos string) int {
	switch goos {
	case "linux", "android":
		return pathMaxLinux - 1
	case "windows":
		return pathMaxWindows - 1
	}
	return pathMaxBSD - 1
}

// maxDecodings bounds the rounds of percent-decoding a name is checked
// through: a name still decoding after that is refused.
const maxDecodings = 4

// PathProblem says why rel, a slash-separated path relative to dir, cannot
// be a file below dir on system goos, "" when it can: one of its segments
// cannot be a name there (NameProblem), the file's name is one that holds
// credentials or runs at start-up (CredentialName), or the whole path is
// longer than the system takes.
func PathProblem(dir, rel, goos string) string {
	for seg := range strings.SplitSeq(rel, "/") {
		if why := NameProblem(seg, goos); why != "" {
			return why
		}
	}
	if why := CredentialName(path.Base(rel)); why != "" {
		return why
	}
	if n := len(dir) + 1 + len(rel); n > MaxPathBytes(goos) {
		return fmt.Sprintf("%d bytes long with the directory, over the %d a path may have on this system", n, MaxPathBytes(goos))
	}
	return ""
}

// NameProblem says why one segment of a memory path cannot be the name of
// a file or directory here, on system goos, "" when it can: it is hidden
// or names what tools run, it is too long, or it is a ".", a ".." or a
// separator once percent-decoded or once look-alike characters are folded
// (a tool that decodes or folds names would take it as traversal), or the
// system does not allow it.
func NameProblem(seg, goos string) string {
	if why := ExecName(seg); why != "" {
		return why
	}
	if len(seg) > MaxNameBytes {
		return fmt.Sprintf("a name of %d bytes, over the %d a file name may have", len(seg), MaxNameBytes)
	}
	form := seg
	for round := 0; ; round++ {
		if round == maxDecodings {
			return "a name still percent-encoded after several rounds of decoding"
		}
		if form == "." || form == ".." || strings.ContainsAny(form, `/\`) {
			if round == 0 && strings.ContainsRune(form, '\\') {
				return `a name holding "\", a path separator on Windows`
			}
			return "the path leaves the directory once decoded (traversal)"
		}
		if round > 0 && ExecName(form) != "" {
			return fmt.Sprintf("the name becomes %q once percent-decoded: %s", form, ExecName(form))
		}
		if f := fold(form); f != form {
			if f == "." || f == ".." || strings.ContainsAny(f, `/\`) {
				return fmt.Sprintf(`the name reads as %q once look-alike characters are folded: a separator, "." or ".."`, f)
			}
			if why := ExecName(f); why != "" {
				return fmt.Sprintf("the name reads as %q once look-alike characters are folded: %s", f, why)
			}
		}
		dec, err := url.PathUnescape(form)
		if err != nil || dec == form {
			break
		}
		form = dec
	}
	if goos == "windows" {
		return windowsNameProblem(seg)
	}
	return ""
}

// ExecName says why a path segment names what other tools read or run
// (a hidden entry such as .git/, .env or .ssh/, or .git's short name on
// Windows), "" when it does not. memstore never writes such a path from a
// store, nor reads one into a store.
func ExecName(seg string) string {
	switch {
	case Hidden(seg):
		return `hidden (a name beginning with "."): configuration, credentials and hooks are never read into or written from a store`
	case strings.EqualFold(seg, gitShortName):
		return "the short name of .git on Windows: never read into or written from a store"
	}
	return ""
}

// CredentialName says why a file's name is one that well-known tools read
// credentials or keys from, or run at a shell's start, "" when it is not.
// memstore never writes such a file from a store, nor reads one into a
// store, whatever the directory: a memory directory that ends up on
// ~/.ssh or the home directory (by a mistake, or by a hostile setting)
// can then neither hand over a key nor plant one, nor a command to run.
// The name is compared without case and with look-alikes folded (NFKC),
// as case-insensitive file systems (macOS, Windows) would find it.
func CredentialName(name string) string {
	f := cases.Fold().String(norm.NFKC.String(name))
	what, ok := credentialNames[f]
	if !ok && sshKeyName.MatchString(f) {
		what, ok = "an SSH key", true
	}
	if !ok {
		return ""
	}
	return fmt.Sprintf("the name of %s, a credential or start-up file: never read into or written from a store", what)
}

// credentialNames are the file names CredentialName refuses, folded, with
// what each is. The list is of names only tools give these files, so that
// no memory's name is taken for one; many begin with "." and are refused
// as hidden too, but they are listed so that the list is whole.
var credentialNames = map[string]string{
	// SSH: who may log in, which hosts are trusted, commands run at login
	// or on connecting (ProxyCommand in config).
	"authorized_keys": "SSH's authorized keys", "authorized_keys2": "SSH's authorized keys",
	"known_hosts": "SSH's known hosts", "known_hosts2": "SSH's known hosts",
	"identity": "an SSH key", "identity.pub": "an SSH key",
	"config": "a tool's configuration (SSH, AWS, kubectl), which can name commands to run",
	"rc":     "SSH's login script", "environment": "SSH's login environment",
	// Passwords and tokens of other tools.
	".netrc": "a netrc file", "_netrc": "a netrc file",
	".pgpass": "PostgreSQL's password file", "pgpass.conf": "PostgreSQL's password file",
	"credentials": "a credentials file (AWS, gem)", "credentials.json": "a credentials file",
	".git-credentials": "git's credentials", ".npmrc": "npm's configuration", ".yarnrc.yml": "Yarn's configuration",
	".pypirc": "PyPI's configuration", ".env": "an environment file", ".envrc": "direnv's script",
	".boto": "a cloud credentials file", ".s3cfg": "a cloud credentials file", ".vault-token": "Vault's token",
	".dockercfg": "Docker's credentials", ".htpasswd": "a password file",
	".rhosts": "an rlogin trust file", ".shosts": "an rlogin trust file", ".k5login": "a Kerberos login file",
	"secring.gpg": "a GnuPG secret keyring",
	// What a shell or a login session runs at start.
	".bashrc": "a shell start-up file", ".bash_profile": "a shell start-up file", ".bash_login": "a shell start-up file",
	".bash_logout": "a shell start-up file", ".profile": "a shell start-up file", ".zshrc": "a shell start-up file",
	".zprofile": "a shell start-up file", ".zshenv": "a shell start-up file", ".zlogin": "a shell start-up file",
	".zlogout": "a shell start-up file", ".login": "a shell start-up file", ".logout": "a shell start-up file",
	".cshrc": "a shell start-up file", ".tcshrc": "a shell start-up file", ".kshrc": "a shell start-up file",
	".mkshrc": "a shell start-up file", ".inputrc": "a shell start-up file", ".xprofile": "a session start-up file",
	".xinitrc": "a session start-up file", ".xsession": "a session start-up file",
	"config.fish": "a shell start-up file", "profile.ps1": "a shell start-up file",
	"microsoft.powershell_profile.ps1": "a shell start-up file",
}

// sshKeyName matches the names ssh-keygen gives keys, folded: id_ and a
// type (id_rsa, id_ed25519_sk) or any name a user gave, with or without
// .pub, never with another extension.
var sshKeyName = regexp.MustCompile(`^id_[a-z0-9_-]+(?:\.pub)?$`)

// gitShortName is the 8.3 name Windows gives .git, which reaches it.
const gitShortName = "git~1"

// slashLikes are characters drawn as a slash or a backslash that NFKC
// leaves as they are; NFKC folds the others (fullwidth ／ and ＼, small
// ﹨) and the dots (fullwidth ．, one- and two-dot leaders ․ ‥).
var slashLikes = strings.NewReplacer(
	"\u2044", "/", // fraction slash
	"\u2215", "/", // division slash
	"\u2571", "/", // box drawings light diagonal upper right to lower left
	"\u27CB", "/", // mathematical rising diagonal
	"\u29F8", "/", // big solidus
	"\u2216", `\`, // set minus
	"\u2572", `\`, // box drawings light diagonal upper left to lower right
	"\u27CD", `\`, // mathematical falling diagonal
	"\u29F5", `\`, // reverse solidus operator
	"\u29F9", `\`, // big reverse solidus
)

// fold maps a name's look-alikes of ".", "/" and "\" to them: the
// slash-likes first (so that NFKC's own fraction slash, as in ½ → 1⁄2, is
// not taken for one), then NFKC.
func fold(name string) string {
	return norm.NFKC.String(slashLikes.Replace(name))
}

// windowsReserved are the device names Windows reserves, with or without
// an extension, in any case.
var windowsReserved = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true, "CONIN$": true, "CONOUT$": true,
	"COM0": true, "COM1": true, "COM2": true, "COM3": true, "COM4": true,
	"COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"COM¹": true, "COM²": true, "COM³": true,
	"LPT0": true, "LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true,
	"LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
	"LPT¹": true, "LPT²": true, "LPT³": true,
}

// windowsNameProblem says why Windows does not allow name, "" when it
// does: a reserved character, a final dot or space, a device name.
func windowsNameProblem(name string) string {
	if i := strings.IndexAny(name, `<>:"|?*`); i >= 0 {
		return fmt.Sprintf("a name holding %q, which Windows does not allow", name[i])
	}
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
		return "a name ending in a dot or a space, which Windows drops"
	}
	if WindowsDevice(name) {
		stem, _, _ := strings.Cut(name, ".")
		return fmt.Sprintf("%q is a device name on Windows", stem)
	}
	if ShortName(name) {
		return "a name in Windows' short (8.3) form, which can reach another file (AUTHOR~1 is authorized_keys)"
	}
	return ""
}

// shortName matches the 8.3 names Windows gives long names (AUTHOR~1,
// MEMORY~1.MD), through which a write would reach the long name's file
// whatever CredentialName and ExecName say of the short one.
var shortName = regexp.MustCompile(`^[^.~]{1,6}~[0-9]{1,6}(?:\.[^.]{1,3})?$`)

// ShortName reports whether name has the 8.3 short form that Windows
// gives long names (AUTHOR~1, MEMORY~1.MD).
func ShortName(name string) bool { return shortName.MatchString(name) }

// WindowsDevice reports whether name is a device name that Windows
// reserves (CON, NUL, COM1, ...), with or without an extension, in any
// case.
func WindowsDevice(name string) bool {
	stem, _, _ := strings.Cut(name, ".")
	return windowsReserved[strings.ToUpper(strings.TrimRight(stem, " "))]
}

// LookAlike reports whether r, a character other than ASCII, may be read
// as one that paths give a meaning to: folded as NameProblem folds it,
// it holds a "." or one of / \ : * ? " < > |, or ¥ or ₩, which the
// Japanese and Korean code pages of Windows write with the byte of "\".
// A tool that maps names to such a code page, or folds them, reads it as
// that character.
func LookAlike(r rune) bool {
	return r >= utf8.RuneSelf && strings.ContainsAny(fold(string(r)), "./\\:*?\"<>|\u00a5\u20a9")
}
