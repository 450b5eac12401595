//go:build !linux

package memorytool

import (
	"context"
	"errors"
	"os"
)

// Elsewhere than on Linux, every command takes the general path of
// resolve.go: there is no openat2. The functions below are never called,
// as resolveFast never resolves.

type fastRoot struct{}

func (r *fastRoot) open(*os.Root) {}
func (r *fastRoot) close()        {}
func (r *fastRoot) disable()      {}

func (l *Local) resolveFast(p, rel string, unchecked bool) (target, bool) { return target{}, false }

func (t target) close() {}

func (l *Local) viewFast(context.Context, string, string, []int) (string, bool, error) {
	return "", false, nil
}

var errNoFastPath = errors.New("no fast path on this system")

func readFast(target) ([]byte, bool, error)           { return nil, false, nil }
func (l *Local) writeFast(target, []byte, bool) error { return errNoFastPath }
func removeFast(target) error                         { return errNoFastPath }
func renameFast(from, to target) error                { return errNoFastPath }
