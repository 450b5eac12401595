//go:build linux || darwin

package npmtest

import (
	"testing"
	"time"
)

// TestLockDirWaits: a second lock of a directory, as another test
// binary's would be, waits until the first is released.
func TestLockDirWaits(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func())
	go func() {
		u, err := lockDir(dir)
		if err != nil {
			t.Error(err)
			u = func() {}
		}
		got <- u
	}()
	select {
	case u := <-got:
		u()
		t.Fatal("a second lock was taken while the first was held")
	case <-time.After(300 * time.Millisecond):
	}
	unlock()
	select {
	case u := <-got:
		u()
	case <-time.After(10 * time.Second):
		t.Fatal("the second lock was not taken within 10 s of the first's release")
	}
}
