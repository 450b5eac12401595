package memorytool

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"time"
)

// housekeep removes expired files when Options.ExpireAfter is set, at most
// once per sweepInterval. A failed sweep is retried at the next interval;
// it never fails the command that triggered it.
func (l *Local) housekeep() {
	if l.opts.ExpireAfter <= 0 {
		return
	}
	now := l.opts.now()
	l.sweepMu.Lock()
	due := l.lastSweep.IsZero() || now.Sub(l.lastSweep) >= sweepInterval
	if due {
		l.lastSweep = now
	}
	l.sweepMu.Unlock()
	if due {
		_, _ = l.Prune(context.Background(), now.Add(-l.opts.ExpireAfter), false)
	}
}

// Prune removes every regular file below the root that was last read or
// written before cutoff, then the directories that this leaves empty (never
// the root). It returns the removed files as model paths (/memories/...),
// in UTF-16 order; with dryRun it removes nothing and returns what it would
// remove. Symlinks are neither followed nor removed.
//
// "Last read or written" is the later of the file's modification and access
// times; Local records reads in the access time while ExpireAfter is set.
func (l *Local) Prune(ctx context.Context, cutoff time.Time, dryRun bool) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var removed []string
	_, err := l.prune(ctx, ".", cutoff, dryRun, &removed)
	return removed, err
}

// prune works on dir and reports whether it is left empty.
func (l *Local) prune(ctx context.Context, dir string, cutoff time.Time, dryRun bool, removed *[]string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	f, err := l.root.Open(dir)
	if err != nil {
		return false, err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return false, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	sortUTF16(names)
	left := len(names)
	for _, name := range names {
		rel := path.Join(dir, name)
		fi, err := l.root.Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			left--
			continue
		} else if err != nil {
			return false, err
		}
		switch {
		case fi.IsDir():
			empty, err := l.prune(ctx, rel, cutoff, dryRun, removed)
			if err != nil {
				return false, err
			}
			if empty && !dryRun {
				if err := l.root.Remove(rel); err == nil {
					left--
				}
			}
		case fi.Mode().IsRegular() && lastTouched(fi).Before(cutoff):
			*removed = append(*removed, Root+"/"+rel)
			if dryRun {
				continue
			}
			if err := l.root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return false, err
			}
			left--
		}
	}
	return left == 0, nil
}

// lastTouched is the later of a file's modification and access times
// (atime, where the system reports it: see atime_*.go).
func lastTouched(fi fs.FileInfo) time.Time {
	t := fi.ModTime()
	if at := accessTime(fi); at.After(t) {
		t = at
	}
	return t
}
