package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/httpapi"
)

// defaultDreamModel is the model a dream asks for when --model is not
// given (the server's model endpoint must know it).
const defaultDreamModel = "claude-sonnet-4-6"

// dreamPoll is how often memstore dream --wait asks how the dream is
// going.
const dreamPoll = time.Second

const dreamHelp = `Usage: memstore dream --store STORE --session ID... [--instructions TEXT] [--model ID] [--update-existing] [--wait]

Asks the server to run a dream: its model reads the transcripts of the
sessions given and the memory store, and writes a reorganized store. By
default the dream writes a new store, a copy of STORE, and STORE is left
alone: review the changes with 'memstore stores diff' or in the console
(Dreams), which applies the ones you choose. With --update-existing it
writes STORE itself, each change a new version.

Without --wait, prints the dream as soon as it is made (pending). With
--wait, shows its progress on standard error until it stops (its status,
its usage, and each tool call it makes, read from its session), then prints
what it changed: the diff from STORE to the new store (as 'memstore
stores diff'), or the versions it wrote with --update-existing. The exit
status is 1 when the dream failed or was canceled. Stopping the wait
(Ctrl-C) leaves the dream running: 'memstore dreams cancel ID' stops it.

--session is repeated for each session (1 to 100), or given as a
comma-separated list. With --json, the API's dream object; with --wait,
{"dream": ..., "diff": ...} (diff as 'stores diff --json', or
"versions" with --update-existing).

Dreams run on a server with a model (see docs/dreams.md): give --url.
`

const dreamsHelp = `Usage: memstore dreams [ls] [--archived] [--status STATUS]...
       memstore dreams get ID [--diff]
       memstore dreams cancel ID [--yes]
       memstore dreams archive ID [--yes]

Lists and manages the workspace's dreams ('memstore dream' starts one).

  ls       list the dreams, newest first (archived ones with --archived;
           only those of a --status: pending, running, completed,
           failed, canceled)
  get      print a dream: its status, inputs, output store, session,
           usage and error; with --diff, also what it changed
  cancel   stop a pending or running dream; what it wrote stays
  archive  hide a completed, failed or canceled dream from the list

cancel and archive cannot be undone: they ask first on a terminal, and
take --yes in scripts.

Run 'memstore dreams SUBCOMMAND --help' for a subcommand's flags.
` + backendHelp

func dreamsCommands() []command {
	return []command{
		{"ls", "list the dreams", runDreamsLs},
		{"get", "print a dream", runDreamsGet},
		{"cancel", "stop a dream", runDreamsCancel},
		{"archive", "hide a finished dream from the list", runDreamsArchive},
	}
}

func runDreams(ctx context.Context, e env, args []string) error {
	return dispatch(ctx, e, "dreams", dreamsHelp, "ls", dreamsCommands(), args)
}

func dreamsFlags(e env, sub, usage string) (*flag.FlagSet, *backendFlags) {
	fs := newFlags(e, "dreams "+sub, usage+backendHelp)
	return fs, addBackendFlags(fs, "dreams "+sub, false)
}

func runDream(ctx context.Context, e env, args []string) error {
	fs := newFlags(e, "dream", dreamHelp+backendHelp)
	bf := addBackendFlags(fs, "dream", true)
	var sessions listFlag
	fs.Var(&sessions, "session", "a session `ID` whose transcript the dream reads (repeat, or comma-separated)")
	instructions := fs.String("instructions", "", "what the dream should focus on (`TEXT`, 1 to 4,096 characters)")
	model := fs.String("model", defaultDreamModel, "the model `ID` that runs the dream")
	update := fs.Bool("update-existing", false, "write the store itself, each change a new version, instead of a new store")
	wait := fs.Bool("wait", false, "wait until the dream stops, showing its progress, then print what it changed")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore dream: unexpected argument %q; give sessions with --session", pos[0])
	}
	var ids []string
	for _, s := range sessions {
		for id := range strings.SplitSeq(s, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return usageError(e, "memstore dream: give the sessions whose transcripts the dream reads, with --session ID (see 'memstore sessions ls')")
	}
	c, storeID, err := bf.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	if c.client == nil {
		return usageError(e, "memstore dream: dreams run on a server, with its model: give --url (or MEMSTORE_URL) and --api-key")
	}
	dc := memstore.DreamCreate{
		Inputs: []memstore.DreamInput{
			{Type: memstore.DreamInputMemoryStore, MemoryStoreID: storeID},
			{Type: memstore.DreamInputSessions, SessionIDs: ids},
		},
		Model: memstore.DreamModel{ID: *model, Speed: memstore.SpeedStandard},
	}
	if *instructions != "" {
		dc.Instructions = instructions
	}
	if *update {
		dc.OutputBehavior, dc.OutputStoreID = memstore.OutputUpdateExisting, storeID
	}
	d, err := c.CreateDream(ctx, c.caller, dc)
	if err != nil {
		return err
	}
	if !*wait {
		return c.printDream(d)
	}
	fmt.Fprintf(e.stderr, "dream %s: %s\n", d.ID, d.Status)
	if d, err = c.waitDream(ctx, d); err != nil {
		return err
	}
	return c.dreamOutcome(ctx, d)
}

// waitDream polls dream d until it stops, reporting each change of its
// status and usage on standard error. Stopping the wait leaves it be.
func (c *conn) waitDream(ctx context.Context, d *memstore.Dream) (*memstore.Dream, error) {
	last := *d
	steps := &dreamSteps{}
	tick := time.NewTicker(dreamPoll)
	defer tick.Stop()
	for !d.Status.Final() {
		select {
		case <-ctx.Done():
			fmt.Fprintf(c.e.stderr, "stopped waiting; dream %s goes on: 'memstore dreams get %s' shows it, 'memstore dreams cancel %s' stops it\n", d.ID, d.ID, d.ID)
			return nil, ctx.Err()
		case <-tick.C:
		}
		cur, err := c.Dream(ctx, c.caller, d.ID)
		if err != nil {
			return nil, err
		}
		d = cur
		steps.show(ctx, c, d)
		switch {
		case d.Status != last.Status && d.Status == memstore.DreamRunning:
			fmt.Fprintf(c.e.stderr, "dream %s: running in session %s, writing memory store %s\n", d.ID, d.RunningSessionID(), strings.Join(d.Outputs(), ", "))
		case d.Status != last.Status:
			fmt.Fprintf(c.e.stderr, "dream %s: %s\n", d.ID, d.Status)
		case d.Usage != last.Usage:
			fmt.Fprintf(c.e.stderr, "dream %s: %s\n", d.ID, usageText(d.Usage))
		}
		last = *d
	}
	return d, nil
}

// dreamSteps shows the tool calls of a dream's session as they are
// appended to its transcript: what the dream reads and writes.
type dreamSteps struct {
	// since is when the last event shown was processed, and shown the
	// events shown of that instant, which the next read returns again:
	// events carry no number over the wire, and several may share a time.
	since  *time.Time
	shown  map[string]bool
	failed bool // the transcript could not be read: said once
}

// show prints the tool calls of d's session since the last shown.
func (s *dreamSteps) show(ctx context.Context, c *conn, d *memstore.Dream) {
	ses := d.RunningSessionID()
	if ses == "" || s.failed {
		return
	}
	f := memstore.SessionEventFilter{Types: []string{"agent.tool_use"}, CreatedAtGTE: s.since, Limit: memstore.MaxPageSize}
	for {
		page, err := c.ListSessionEvents(ctx, c.caller, ses, f)
		if err != nil {
			s.failed = true
			fmt.Fprintf(c.e.stderr, "dream %s: its steps cannot be shown (%s); waiting for it to stop\n", d.ID, memstore.ErrorMessage(err))
			return
		}
		for _, ev := range page.Items {
			if s.shown[ev.ID] {
				continue
			}
			if s.since == nil || ev.ProcessedAt.After(*s.since) {
				at := ev.ProcessedAt
				s.since, s.shown = &at, map[string]bool{}
			}
			s.shown[ev.ID] = true
			var call struct {
				Name  string
				Input struct{ Path string }
			}
			if json.Unmarshal(ev.Body, &call) == nil {
				fmt.Fprintf(c.e.stderr, "dream %s: %s %s\n", d.ID, cell(call.Name), cell(call.Input.Path))
			}
		}
		if page.Next == "" {
			return
		}
		f.Page = page.Next
	}
}

// usageText is a dream's usage for people.
func usageText(u memstore.DreamUsage) string {
	return fmt.Sprintf("%d input tokens (%d cache read, %d cache write), %d output tokens",
		u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
}

// dreamOutcome prints what a stopped dream changed, and fails unless it
// completed.
func (c *conn) dreamOutcome(ctx context.Context, d *memstore.Dream) error {
	if !c.json {
		fmt.Fprintf(c.e.stderr, "dream %s: %s; %s\n", d.ID, d.Status, usageText(d.Usage))
	}
	if err := c.printDreamChanges(ctx, d); err != nil {
		return err
	}
	switch d.Status {
	case memstore.DreamCompleted:
		return nil
	case memstore.DreamFailed:
		msg := "no error given"
		if d.Error != nil {
			msg = d.Error.Type + ": " + d.Error.Message
		}
		return fmt.Errorf("dream %s failed: %s", d.ID, msg)
	}
	return fmt.Errorf("dream %s was %s; what it wrote before stays", d.ID, d.Status)
}

// printDreamChanges prints what dream d changed: the diff from its input
// store to its output store, or, when it wrote its input, the versions
// its session made. With --json, {"dream": ..., "diff"|"versions": ...}.
func (c *conn) printDreamChanges(ctx context.Context, d *memstore.Dream) error {
	out := d.Outputs()
	if len(out) == 0 {
		if c.json {
			return printJSON(c.e.stdout, map[string]any{"dream": httpapi.NewDreamJSON(d)})
		}
		fmt.Fprintf(c.e.stderr, "dream %s wrote nothing: it stopped before it began\n", d.ID)
		return nil
	}
	if out[0] != d.InputStoreID {
		js, err := c.diffStores(ctx, c.e.stdout, d.InputStoreID, out[0], false)
		if err != nil || !c.json {
			return err
		}
		return printJSON(c.e.stdout, map[string]any{"dream": httpapi.NewDreamJSON(d), "diff": js})
	}
	var versions []memstore.Version
	if f := (memstore.VersionFilter{SessionID: d.RunningSessionID(), Limit: memstore.MaxPageSize}); f.SessionID != "" {
		var err error
		versions, err = allPages(func(page string) (memstore.Page[memstore.Version], error) {
			f.Page = page
			return c.Versions(ctx, c.caller, d.InputStoreID, f)
		})
		if err != nil {
			return err
		}
	}
	if c.json {
		vs := make([]httpapi.VersionJSON, len(versions))
		for i := range versions {
			vs[i] = httpapi.NewVersionJSON(&versions[i], false)
		}
		return printJSON(c.e.stdout, map[string]any{"dream": httpapi.NewDreamJSON(d), "versions": vs})
	}
	return printTable(c.e, versions, fmt.Sprintf("dream %s wrote no version of memory store %s", d.ID, d.InputStoreID),
		[]string{"VERSION", "OPERATION", "PATH", "SIZE", "CREATED"},
		func(v *memstore.Version) []string {
			return []string{v.ID, string(v.Operation), v.Path, strconv.FormatInt(v.ContentSize, 10), fmtTime(v.CreatedAt)}
		})
}

// statusFlag collects repeated --status values.
type statusFlag []memstore.DreamStatus

func (s *statusFlag) String() string { return "" }

func (s *statusFlag) Set(v string) error {
	for _, st := range memstore.DreamStatuses {
		if string(st) == v {
			*s = append(*s, st)
			return nil
		}
	}
	names := make([]string, len(memstore.DreamStatuses))
	for i, st := range memstore.DreamStatuses {
		names[i] = string(st)
	}
	return fmt.Errorf("%q is not a dream status; give one of %s", v, strings.Join(names, ", "))
}

func runDreamsLs(ctx context.Context, e env, args []string) error {
	fs, bf := dreamsFlags(e, "ls", "Usage: memstore dreams ls [--archived] [--status STATUS]...\n\nLists the workspace's dreams, newest first.\n")
	archived := fs.Bool("archived", false, "include archived dreams")
	var statuses statusFlag
	fs.Var(&statuses, "status", "only the dreams of this `STATUS` (repeat for several): pending, running, completed, failed, canceled")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(e, "memstore dreams ls: unexpected argument %q", pos[0])
	}
	c, err := bf.open(ctx, e)
	if err != nil {
		return err
	}
	defer c.Close()
	f := memstore.DreamFilter{IncludeArchived: *archived, Statuses: statuses, Limit: memstore.MaxPageSize}
	dreams, err := allPages(func(page string) (memstore.Page[memstore.Dream], error) {
		f.Page = page
		return c.Dreams(ctx, c.caller, f)
	})
	if err != nil {
		return err
	}
	if c.json {
		return printJSONList(e.stdout, dreams, httpapi.NewDreamJSON)
	}
	return printTable(e, dreams, "no dreams; start one with 'memstore dream --store STORE --session ID'",
		[]string{"ID", "STATUS", "STORE", "OUTPUT", "SESSIONS", "CREATED", "ARCHIVED"},
		func(d *memstore.Dream) []string {
			return []string{d.ID, string(d.Status), d.InputStoreID, strings.Join(d.Outputs(), ","), strconv.Itoa(len(d.SessionIDs)), fmtTime(d.CreatedAt), fmtTimePtr(d.ArchivedAt)}
		})
}

// oneDreamArg parses a dreams subcommand that takes one dream ID and
// opens the backend.
func oneDreamArg(ctx context.Context, e env, fs *flag.FlagSet, bf *backendFlags, args []string) (*conn, string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, "", err
	}
	if len(pos) != 1 {
		return nil, "", usageError(e, "memstore %s: give one dream ID (see 'memstore dreams ls')", bf.cmd)
	}
	c, err := bf.open(ctx, e)
	if err != nil {
		return nil, "", err
	}
	return c, pos[0], nil
}

func runDreamsGet(ctx context.Context, e env, args []string) error {
	fs, bf := dreamsFlags(e, "get", "Usage: memstore dreams get ID [--diff]\n\nPrints a dream, archived or not. With --diff, also what it changed, as\n'memstore dream --wait' prints it.\n")
	diff := fs.Bool("diff", false, "also print what the dream changed")
	c, id, err := oneDreamArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	d, err := c.Dream(ctx, c.caller, id)
	if err != nil {
		return err
	}
	if *diff {
		if !c.json {
			if err := c.printDream(d); err != nil {
				return err
			}
			fmt.Fprintln(e.stdout)
		}
		return c.printDreamChanges(ctx, d)
	}
	return c.printDream(d)
}

func runDreamsCancel(ctx context.Context, e env, args []string) error {
	fs, bf := dreamsFlags(e, "cancel", "Usage: memstore dreams cancel ID [--yes]\n\nStops a pending or running dream: its status is canceled at once, and a\nrunning one stops at its next step. What it wrote stays. Canceling a\ncanceled dream changes nothing. It asks first on a terminal; --yes\nconfirms for scripts.\n")
	yes := addYesFlag(fs)
	return changeDream(ctx, e, fs, bf, args, func(c *conn, d *memstore.Dream) (*memstore.Dream, error) {
		// A final dream is the core's to answer for: nothing to confirm.
		if !d.Status.Final() {
			if err := confirm(e, "dreams cancel", *yes, fmt.Sprintf("cancel dream %s (%s)", d.ID, d.Status)); err != nil {
				return nil, err
			}
		}
		return c.CancelDream(ctx, c.caller, d.ID)
	})
}

func runDreamsArchive(ctx context.Context, e env, args []string) error {
	fs, bf := dreamsFlags(e, "archive", "Usage: memstore dreams archive ID [--yes]\n\nArchives a completed, failed or canceled dream, for good: 'dreams ls'\nshows it only with --archived. Its stores and session stay. It asks\nfirst on a terminal; --yes confirms for scripts.\n")
	yes := addYesFlag(fs)
	return changeDream(ctx, e, fs, bf, args, func(c *conn, d *memstore.Dream) (*memstore.Dream, error) {
		if d.ArchivedAt == nil && d.Status.Final() {
			if err := confirm(e, "dreams archive", *yes, fmt.Sprintf("archive dream %s (%s)", d.ID, d.Status)); err != nil {
				return nil, err
			}
		}
		return c.ArchiveDream(ctx, c.caller, d.ID)
	})
}

// changeDream reads the dream the arguments name, changes it and prints
// it.
func changeDream(ctx context.Context, e env, fs *flag.FlagSet, bf *backendFlags, args []string, change func(*conn, *memstore.Dream) (*memstore.Dream, error)) error {
	c, id, err := oneDreamArg(ctx, e, fs, bf, args)
	if err != nil {
		return err
	}
	defer c.Close()
	d, err := c.Dream(ctx, c.caller, id)
	if err != nil {
		return err
	}
	if d, err = change(c, d); err != nil {
		return err
	}
	return c.printDream(d)
}

// printDream prints a dream as the API's object or as a block of fields.
func (c *conn) printDream(d *memstore.Dream) error {
	if c.json {
		return printJSON(c.e.stdout, httpapi.NewDreamJSON(d))
	}
	errText := ""
	if d.Error != nil {
		errText = d.Error.Type + ": " + d.Error.Message
	}
	return block(c.e.stdout,
		[2]string{"id", d.ID},
		[2]string{"status", string(d.Status)},
		[2]string{"input_store", d.InputStoreID},
		[2]string{"sessions", strings.Join(d.SessionIDs, ", ")},
		[2]string{"model", d.Model.ID},
		[2]string{"instructions", d.Instructions},
		[2]string{"output_behavior", d.OutputBehavior},
		[2]string{"output_store", strings.Join(d.Outputs(), ", ")},
		[2]string{"session", d.RunningSessionID()},
		[2]string{"usage", usageText(d.Usage)},
		[2]string{"error", errText},
		[2]string{"created_at", fmtTime(d.CreatedAt)},
		[2]string{"started_at", fmtTimePtr(d.StartedAt)},
		[2]string{"ended_at", fmtTimePtr(d.EndedAt)},
		[2]string{"archived_at", fmtTimePtr(d.ArchivedAt)},
	)
}
