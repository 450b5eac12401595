package dirsync

import (
	"context"
	"errors"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/memstore/memstore/internal/localfile"
)

// WatchOptions say how often Watch looks for changes.
type WatchOptions struct {
	// LocalPoll is how often the directory is checked for changes (a walk
	// of file sizes and times, no reading); one second when 0. A change
	// is synced once the directory has stayed as it is for one more poll,
	// so that a burst of edits makes one sync.
	LocalPoll time.Duration
	// RemotePoll is how often the store is checked when nothing changed
	// here; 30 seconds when 0.
	RemotePoll time.Duration
	// RemoteChanged, when not nil, says that the store has changed (its
	// change feed does): each signal syncs at once, so that a change made
	// elsewhere arrives without waiting for the poll, which remains the
	// safety net for a signal lost.
	RemoteChanged <-chan struct{}
	// FinalTimeout bounds the last sync, made after ctx is done; 30
	// seconds when 0.
	FinalTimeout time.Duration
	// OnPass, when set, receives the report and error of every sync.
	OnPass func(*Report, error)
}

// Watch syncs o.Dir with its store once, then again whenever the
// directory changes, the store signals a change, and every RemotePoll,
// until ctx is done; then it syncs
// one last time and returns that sync's error. A failing sync (a server
// that is down, a busy directory) is handed to OnPass and tried again at
// the next change or poll; only a directory synced with another store, or
// bad options, ends the watch early.
func Watch(ctx context.Context, o Options, w WatchOptions) error {
	if o.DryRun {
		return errors.New("dirsync: a watch cannot be a dry run")
	}
	if err := o.check(); err != nil {
		return err
	}
	if w.LocalPoll <= 0 {
		w.LocalPoll = time.Second
	}
	if w.RemotePoll <= 0 {
		w.RemotePoll = 30 * time.Second
	}
	if w.FinalTimeout <= 0 {
		w.FinalTimeout = 30 * time.Second
	}
	pass := func(ctx context.Context) error {
		rep, err := Sync(ctx, o)
		if err != nil && ctx.Err() != nil {
			return nil // interrupted by the stop: the last sync follows
		}
		if w.OnPass != nil {
			w.OnPass(rep, err)
		}
		return err
	}

	synced := fingerprint(&o) // the directory as the last sync found it
	last := time.Now()
	if err := pass(ctx); errors.Is(err, ErrOtherStore) {
		return err
	}
	prev := synced
	tick := time.NewTicker(w.LocalPoll)
	defer tick.Stop()
	for {
		remote := false
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.FinalTimeout)
			defer cancel()
			rep, err := Sync(fctx, o)
			if w.OnPass != nil {
				w.OnPass(rep, err)
			}
			return err
		case <-tick.C:
		case <-w.RemoteChanged:
			remote = true
		}
		fp := fingerprint(&o)
		settled := fp != synced && fp == prev
		prev = fp
		if !remote && !settled && time.Since(last) < w.RemotePoll {
			continue
		}
		// Taken before the sync: an edit made during it differs from this
		// and is synced next time. The sync's own writes cost one more
		// pass that finds nothing to do.
		synced, last = fp, time.Now()
		if err := pass(ctx); errors.Is(err, ErrOtherStore) {
			return err
		}
	}
}

// fingerprint sums the names, sizes, modes and modification times of the
// directory's files and the names of its subdirectories, without reading
// any file: a cheap way to tell that something changed. The sync's own
// files and hidden entries, which are never synced, are left out.
func fingerprint(o *Options) uint64 {
	h := fnv.New64a()
	root, err := os.OpenRoot(o.Dir)
	if err != nil {
		return 0
	}
	defer root.Close()
	fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			h.Write([]byte("error " + rel + "\x00"))
			return nil
		}
		if d.IsDir() && rel != "." && (o.Scope == ScopePrivate && rel == teamDir || localfile.ExecName(d.Name()) != "") {
			return fs.SkipDir // never synced: .git/ changes are no reason to sync
		}
		if ownName(filepath.ToSlash(rel)) || localfile.ExecName(d.Name()) != "" {
			return nil
		}
		if d.IsDir() {
			// A directory's time moves with the sync's own state file:
			// its name is enough, its files speak for themselves.
			h.Write([]byte(rel + "/\x00"))
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		h.Write([]byte(rel + "\x00" + strconv.FormatInt(fi.Size(), 10) + "\x00" +
			strconv.FormatInt(fi.ModTime().UnixNano(), 10) + "\x00" + fi.Mode().String() + "\x00"))
		return nil
	})
	return h.Sum64()
}
