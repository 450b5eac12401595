// Package memdir works on the memory directory of a project, the plain
// files in which a coding agent keeps what it learns between sessions, in
// the layout Claude Code uses, so that memstore and Claude Code can share
// one directory.
//
// A memory directory holds:
//
//   - MEMORY.md, the index: one line per memory, loaded into the agent's
//     context at the start of every session, up to 200 lines and 25,000
//     UTF-16 units (see LoadIndex);
//   - topic files, one memory each, Markdown with frontmatter naming the
//     memory, saying in one line what it is about, and giving its type
//     (user, feedback, project or reference);
//   - team/, memory shared with a team, with its own team/MEMORY.md;
//   - logs/YYYY/MM/YYYY-MM-DD.md, daily logs in local time.
//
// Where the directory is follows Claude Code's rules (see Resolve): an
// override from the environment or from settings files when it passes
// validation, else one directory per project under the user's Claude
// configuration directory, named after the project's canonical git root,
// so that every worktree of a repository shares one memory. Agents with
// memory of their own keep it apart (see AgentDir). Memory can be turned
// off by the environment or by settings; Location.Enabled says whether it
// is on and DisabledBy which rule turned it off.
//
// The package only finds, reads and writes files: it never reads the
// environment (callers pass Options.Getenv) and never talks to a server;
// the memstore command wires it to memory stores for sync.
package memdir
