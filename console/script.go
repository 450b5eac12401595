package console

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// The console's one script, static/copy.js: copy buttons beside short
// IDs, added by the script itself so that a page without it is the same.
// The Content-Security-Policy allows it by its hash alone (with the
// integrity attribute that the hash of an external script needs), so
// that no other script runs, nor this one altered. Its address carries
// the hash too, so that browsers may keep it for good.
var copyScript = newScript("copy.js")

type script struct {
	Src       string // its address, with its version
	Integrity string // "sha256-" and the base64 of its SHA-256
	version   string // the query parameter v of Src
}

func newScript(name string) script {
	b, err := staticFS.ReadFile("static/" + name)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(b)
	v := hex.EncodeToString(sum[:8])
	return script{Src: Prefix + "static/" + name + "?v=" + v, Integrity: "sha256-" + base64.StdEncoding.EncodeToString(sum[:]), version: v}
}
