package localfile

import "testing"

// TestCredentialName: the names of files that hold credentials or run at
// a shell's start, refused in any case and in look-alike spellings, and
// names that only resemble them, let through.
func TestCredentialName(t *testing.T) {
	for name, refused := range map[string]bool{
		"authorized_keys": true, "AUTHORIZED_KEYS": true, "Authorized_Keys2": true,
		"known_hosts": true, "known_ho\u017fts": true, "\u212anown_hosts": true,
		"id_rsa": true, "id_ed25519": true, "id_ecdsa_sk": true, "id_ed25519.pub": true, "ID_RSA": true, "id_work": true, "identity": true,
		"config": true, "rc": true, "environment": true, "credentials": true, "Credentials": true, "credentials.json": true,
		".netrc": true, "_netrc": true, ".pgpass": true, "pgpass.conf": true, ".git-credentials": true,
		".npmrc": true, ".pypirc": true, ".env": true, ".bashrc": true, ".bash_profile": true, ".profile": true,
		".zshrc": true, ".zprofile": true, ".zshenv": true, ".login": true, ".cshrc": true, ".tcshrc": true,
		"config.fish": true, "profile.ps1": true, "Microsoft.PowerShell_profile.ps1": true, "secring.gpg": true,

		"notes.md": false, "id_card_ideas.md": false, "credentials.md": false, "config.md": false,
		"ssh-config.md": false, "id_": false, "identity.md": false, "bashrc.md": false, "known_hosts.md": false,
		"": false, "idrsa": false, "MEMORY.md": false,
	} {
		if why := CredentialName(name); (why != "") != refused {
			t.Errorf("CredentialName(%q) = %q; want refused %v", name, why, refused)
		}
	}
	// The path of a file is refused for its own name, not a directory's.
	for rel, refused := range map[string]bool{
		"notes/authorized_keys":    true,
		"authorized_keys/notes.md": false,
		"ssh/id_rsa":               true,
		"fish/config.fish":         true,
		"config/notes.md":          false,
	} {
		if why := PathProblem("/home/me/mem", rel, "linux"); (why != "") != refused {
			t.Errorf("PathProblem(%q) = %q; want refused %v", rel, why, refused)
		}
	}
}
