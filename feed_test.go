package memstore

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestFollow: follow reads again at once while a delivery says more
// waits, else only when woken (the recheck is an hour away), delivers
// nothing read once its context has ended, and ends with the error of a
// read or a delivery.
func TestFollow(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	wake := make(chan struct{})
	reads, proceed := make(chan int), make(chan struct{})
	var delivered []int
	n := 0
	done := make(chan error, 1)
	go func() {
		done <- follow(ctx, wake, time.Hour,
			func() (int, error) {
				n++
				reads <- n
				<-proceed
				return n, nil
			},
			func(p int) (bool, error) {
				delivered = append(delivered, p)
				return p == 1, nil
			})
	}()
	for want := range 2 {
		if got := <-reads; got != want+1 {
			t.Fatalf("read %d, want %d", got, want+1)
		}
		proceed <- struct{}{}
	}
	wake <- struct{}{} // taken only once follow waits
	if got := <-reads; got != 3 {
		t.Fatalf("read %d after the wake, want 3", got)
	}
	cancel()
	proceed <- struct{}{}
	if err := <-done; err != nil {
		t.Fatalf("follow ended with %v, want nil once its context ended", err)
	}
	if !slices.Equal(delivered, []int{1, 2}) {
		t.Errorf("delivered %v, want [1 2]: the read after the context ended is not delivered", delivered)
	}

	boom := errors.New("boom")
	err := follow(t.Context(), nil, time.Hour,
		func() (int, error) { return 0, nil },
		func(int) (bool, error) { return false, boom })
	if err != boom {
		t.Errorf("a failed delivery: %v, want %v", err, boom)
	}
	err = follow(t.Context(), nil, time.Hour,
		func() (int, error) { return 0, boom },
		func(int) (bool, error) { t.Error("delivered a failed read"); return false, nil })
	if err != boom {
		t.Errorf("a failed read: %v, want %v", err, boom)
	}
}
