package main

import (
	"context"
	"fmt"
)

const memdirHelp = `Usage: memstore memdir SUBCOMMAND [flags]

Works on the memory directory of a project, the way Claude Code keeps it:
a MEMORY.md index, one topic file per memory, daily logs, and team/ for
memory shared with a team. memstore finds the same directory Claude Code
uses, loads the index with the same limits, writes its own guidance, and
shares the directory across devices and with a team by syncing it with a
memory store.

Every subcommand takes --cwd DIR (default: the working directory) and
--json. Exit status: 0 done; 1 done with findings, or nothing found;
2 usage; 3 memory is disabled; 5 local I/O error; 6 server or auth error.

Run 'memstore memdir SUBCOMMAND --help' for a subcommand's flags.
`

// The exit statuses of the memdir subcommands (docs/memory-directory.md,
// Commands).
const (
	exitFindings = exitCode(1) // done, with findings or nothing found
	exitDisabled = exitCode(3) // memory is disabled and the command cannot proceed
	exitLocalIO  = exitCode(5)
	exitServer   = exitCode(6) // server or authentication error
)

// localIOError reports err, a local file's, on stderr, and is exit
// status 5.
func localIOError(e env, cmd string, err error) error {
	fmt.Fprintf(e.stderr, "memstore %s: %v\n", cmd, err)
	return exitLocalIO
}

// memdirCommands are the subcommands of memstore memdir, in the order of
// the help.
func memdirCommands() []command {
	return []command{
		{"path", "print the memory directory, its index, team/, a day's log or an agent's memory", runMemdirPath},
		{"prompt", "print memory guidance and the index for an agent, or a SessionStart hook's context", runMemdirPrompt},
		{"log", "append an entry to today's daily log", runMemdirLog},
		{"lint", "check the index and topic files; --fix rebuilds the index, newest first", runMemdirLint},
		{"recall", "find the memories that bear on a query, or a UserPromptSubmit hook's context", runMemdirRecall},
		{"sync", "sync the directory, or team/, with a memory store on a server, both ways", runMemdirSync},
		{"dream", "distill the daily logs since the last dream into topic files and MEMORY.md, with a model", runMemdirDream},
		{"extract", "write memories from a Claude Code transcript, skipping the turns that wrote memory, with a model", runMemdirExtract},
		{"snapshot", "create a snapshot a project commits, or initialize or update the directory from one", runMemdirSnapshot},
	}
}

func runMemdir(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		return usageError(e, "memstore memdir: say what to do; run 'memstore memdir --help' for the list")
	}
	return dispatch(ctx, e, "memdir", memdirHelp+memdirList(), "", memdirCommands(), args)
}

// memdirList is the list of subcommands for the help.
func memdirList() string {
	s := "\nSubcommands:\n"
	for _, c := range memdirCommands() {
		s += "  " + c.name + "\t" + c.summary + "\n"
	}
	return s
}
