package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/memstore/memstore/memdir"
)

const memdirSnapshotHelp = `Usage: memstore memdir snapshot create|status|apply [flags]

A snapshot is a copy of a memory directory's MEMORY.md and topic files
that a project commits, so that everyone on it starts with the same
memory, in Claude Code's layout: the files and snapshot.json, which says
when it was made. The project's memory goes to .claude/memory-snapshot/;
an agent's (--agent NAME --scope user|project|local) to
.claude/agent-memory-snapshots/NAME/, where Claude Code itself looks.
logs/, team/ and hidden files are never in a snapshot. To publish one to
a memory store, sync its directory: memstore memdir sync --dir DIR.

  create  write the memory directory to the snapshot (replacing it),
          stamped with the time; refused if a file holds a credential
  status  say whether the snapshot would initialize the directory, is
          newer than the one applied, or has nothing new
  apply   initialize a directory without memory from the snapshot; when
          the directory has memory and the snapshot is newer than the one
          applied, replace its memories only once confirmed (--yes, or
          y on a terminal). The directory records the snapshot applied
          in .snapshot-synced.json.

Exit status: 0 done; 1 status: a newer snapshot waits to be applied, or
apply: nothing to apply; 2 usage, or apply not confirmed; 3 memory is
disabled; 5 a file cannot be read or written, or the snapshot is refused.
`

func runMemdirSnapshot(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		return usageError(e, "memstore memdir snapshot: say what to do: create, status or apply; run 'memstore memdir snapshot --help'")
	}
	return dispatch(ctx, e, "memdir snapshot", memdirSnapshotHelp, "", []command{
		{"create", "write the memory directory to its snapshot", runSnapshotCreate},
		{"status", "compare the snapshot with the one applied", runSnapshotStatus},
		{"apply", "initialize or update the memory directory from the snapshot", runSnapshotApply},
	}, args)
}

// snapshotFlags are the flags every snapshot subcommand takes.
type snapshotFlags struct {
	target *memdirTarget
	agent  string
	scope  *choice
	snap   string
}

func addSnapshotFlags(fs *flag.FlagSet) *snapshotFlags {
	f := &snapshotFlags{target: addMemdirTarget(fs)}
	fs.StringVar(&f.agent, "agent", "", "the memory of the agent `NAME` rather than the project's")
	f.scope = newChoice("", string(memdir.ScopeUser), string(memdir.ScopeProject), string(memdir.ScopeLocal))
	fs.Var(f.scope, "scope", "with --agent, where its memory is: `user`, project or local")
	fs.StringVar(&f.snap, "snapshot", "", "the snapshot `DIR` (default: the project's, under .claude/)")
	return f
}

// dirs finds the memory directory and the snapshot directory; an error
// was reported and is the exit status.
func (f *snapshotFlags) dirs(e env, cmd string, pos []string) (dir, snap string, err error) {
	switch {
	case len(pos) > 0:
		return "", "", usageError(e, "memstore %s: unexpected argument %q", cmd, pos[0])
	case f.agent != "" && f.scope.value == "":
		return "", "", usageError(e, "memstore %s: say where the agent's memory is with --scope user, project or local", cmd)
	case f.agent == "" && f.scope.value != "":
		return "", "", usageError(e, "memstore %s: --scope goes with --agent NAME", cmd)
	case f.agent != "" && f.target.dir != "":
		return "", "", usageError(e, "memstore %s: give --dir or --agent, not both", cmd)
	}
	o := f.target.loc.options(e, func(s string) { fmt.Fprintf(e.stderr, "memstore %s: warning: %s\n", cmd, s) })
	if f.agent != "" {
		if dir, err = memdir.AgentDir(o, f.agent, memdir.Scope(f.scope.value)); err != nil {
			return "", "", localIOError(e, cmd, err)
		}
	} else {
		loc, err := f.target.locateEnabled(e, cmd)
		if err != nil {
			return "", "", err
		}
		dir = loc.Dir
	}
	snap = f.snap
	if snap == "" {
		if snap, err = memdir.SnapshotDir(o, f.agent); err != nil {
			return "", "", localIOError(e, cmd, err)
		}
	}
	return dir, snap, nil
}

// snapshotJSON is the --json output of the snapshot subcommands.
type snapshotJSON struct {
	Dir         string `json:"dir"`
	SnapshotDir string `json:"snapshot_dir"`
	memdir.SnapshotState
	// Done says what the command did: created, initialized, updated, or
	// nothing.
	Done string `json:"done,omitempty"`
}

func runSnapshotCreate(ctx context.Context, e env, args []string) error {
	const cmd = "memdir snapshot create"
	fs := newFlags(e, cmd, "Usage: memstore memdir snapshot create [--agent NAME --scope S | --dir DIR] [--snapshot DIR] [--cwd DIR] [--json]\n\nWrites the memory directory's MEMORY.md and topic files to the snapshot,\nreplacing it, stamped with the time. Refused, writing nothing, if a\nfile looks like it holds a credential.\n")
	f := addSnapshotFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	dir, snap, err := f.dirs(e, cmd, pos)
	if err != nil {
		return err
	}
	st, err := memdir.CreateSnapshot(dir, snap, time.Now())
	if err != nil {
		return localIOError(e, cmd, err)
	}
	if f.target.json {
		return printJSON(e.stdout, snapshotJSON{Dir: dir, SnapshotDir: snap, SnapshotState: st, Done: "created"})
	}
	_, err = fmt.Fprintf(e.stdout, "snapshot %s of %s written to %s\n", st.Snapshot, plural(st.Files, "file", "files"), cell(snap))
	return err
}

func runSnapshotStatus(ctx context.Context, e env, args []string) error {
	const cmd = "memdir snapshot status"
	fs := newFlags(e, cmd, "Usage: memstore memdir snapshot status [--agent NAME --scope S | --dir DIR] [--snapshot DIR] [--cwd DIR] [--json]\n\nSays whether the snapshot would initialize the memory directory (it has\nno memory), is newer than the one applied (apply asks before replacing),\nor has nothing new. Exit status 1 when a newer snapshot waits.\n")
	f := addSnapshotFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	dir, snap, err := f.dirs(e, cmd, pos)
	if err != nil {
		return err
	}
	st, err := memdir.CheckSnapshot(dir, snap)
	if err != nil {
		return localIOError(e, cmd, err)
	}
	if f.target.json {
		err = printJSON(e.stdout, snapshotJSON{Dir: dir, SnapshotDir: snap, SnapshotState: st})
	} else {
		_, err = fmt.Fprintln(e.stdout, describeSnapshot(st, snap))
	}
	if err == nil && st.Action == memdir.SnapshotPromptUpdate {
		return exitFindings
	}
	return err
}

// describeSnapshot says for a person where the directory stands.
func describeSnapshot(st memdir.SnapshotState, snap string) string {
	switch {
	case st.Snapshot == "":
		return "no snapshot at " + cell(snap)
	case st.Action == memdir.SnapshotInitialize:
		return fmt.Sprintf("snapshot %s (%s) can initialize the memory directory, which has no memory: run 'memstore memdir snapshot apply'", st.Snapshot, plural(st.Files, "file", "files"))
	case st.Action == memdir.SnapshotPromptUpdate && st.Applied == "":
		return fmt.Sprintf("snapshot %s (%s) was never applied to this memory directory, which has memory of its own: 'memstore memdir snapshot apply --yes' replaces its memories with the snapshot's", st.Snapshot, plural(st.Files, "file", "files"))
	case st.Action == memdir.SnapshotPromptUpdate:
		return fmt.Sprintf("a newer snapshot is available: %s (applied: %s); 'memstore memdir snapshot apply --yes' replaces the memories with it", st.Snapshot, st.Applied)
	}
	return fmt.Sprintf("up to date: snapshot %s applied", st.Applied)
}

func runSnapshotApply(ctx context.Context, e env, args []string) error {
	const cmd = "memdir snapshot apply"
	fs := newFlags(e, cmd, "Usage: memstore memdir snapshot apply [--yes] [--agent NAME --scope S | --dir DIR] [--snapshot DIR] [--cwd DIR] [--json]\n\nInitializes a memory directory without memory from the snapshot. When the\ndirectory has memory and the snapshot is newer than the one applied (or\nnone was), replaces its MEMORY.md and topic files with the snapshot's\nonce confirmed: --yes, or y on a terminal. logs/, team/ and hidden files\nstay. Exit status 1 when there is nothing to apply.\n")
	f := addSnapshotFlags(fs)
	yes := addYesFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	dir, snap, err := f.dirs(e, cmd, pos)
	if err != nil {
		return err
	}
	st, err := memdir.CheckSnapshot(dir, snap)
	if err != nil {
		return localIOError(e, cmd, err)
	}
	done := "initialized"
	switch st.Action {
	case memdir.SnapshotNone:
		if f.target.json {
			if err := printJSON(e.stdout, snapshotJSON{Dir: dir, SnapshotDir: snap, SnapshotState: st, Done: "nothing"}); err != nil {
				return err
			}
		} else {
			fmt.Fprintln(e.stdout, describeSnapshot(st, snap))
		}
		return exitFindings
	case memdir.SnapshotPromptUpdate:
		fmt.Fprintln(e.stderr, describeSnapshot(st, snap))
		if err := confirm(e, cmd, *yes, "replace the memories of "+cell(dir)+" with snapshot "+st.Snapshot); err != nil {
			return err
		}
		done = "updated"
	}
	if st, err = memdir.ApplySnapshot(dir, snap); err != nil {
		return localIOError(e, cmd, err)
	}
	if f.target.json {
		return printJSON(e.stdout, snapshotJSON{Dir: dir, SnapshotDir: snap, SnapshotState: st, Done: done})
	}
	_, err = fmt.Fprintf(e.stdout, "%s %s from snapshot %s (%s)\n", done, cell(dir), st.Snapshot, plural(st.Files, "file", "files"))
	return err
}
