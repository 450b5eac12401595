package storetest

import (
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/memstore/memstore"
)

// race runs create n times at once and returns how many succeeded and
// the errors of the others.
func race(n int, create func() error) (made int, errs []error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		start = make(chan struct{}) // all at once, so that they overlap
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := create()
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				made++
			} else {
				errs = append(errs, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	return made, errs
}

// limitMessage is the form of every refusal past a limit: who holds how
// many of what, then what makes room.
var limitMessage = regexp.MustCompile(`^\S.* is at its limit of \d+ [^;]+; .+$`)

// wantRefusal reports an error unless err is want: its code, message and
// detail, memstore's words in the form of every limit's (the detail,
// where the message is the hosted API's), which must name the flag that
// raises the limit, or none for a fixed cap (flag "").
func wantRefusal(t *testing.T, err error, want *memstore.Error, flag, what string) {
	t.Helper()
	if !wantCode(t, err, want.Code, what) {
		return
	}
	var e *memstore.Error
	if !errors.As(err, &e) || e.Message != want.Message || e.Detail != want.Detail {
		t.Errorf("%s: error %q, want %q", what, err, want)
		return
	}
	words := e.Message
	if e.Detail != "" {
		words = e.Detail
	}
	if !limitMessage.MatchString(words) {
		t.Errorf("%s: error %q is not in the form of a limit's refusal (%s)", what, words, limitMessage)
	}
	switch {
	case flag != "" && !strings.HasSuffix(words, "(memstore serve "+flag+")"):
		t.Errorf("%s: error %q does not end naming %s", what, words, flag)
	case flag == "" && strings.Contains(words, "memstore serve"):
		t.Errorf("%s: error %q names a flag for a fixed cap", what, words)
	}
}
