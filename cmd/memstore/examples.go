package main

// examples are the Examples of each command's help, by the command's
// name as typed after memstore ("stores create"); a subcommand without
// its own shows its command's. writeHelp prints them after the help
// text, unless the help text has its own. Every command has some
// (TestHelpEveryCommand).
var examples = map[string][]string{
	"serve": {
		"memstore serve                              # the default database, on 127.0.0.1:6366",
		"memstore serve --db team.db --init-admin ada # first run: make an admin, print a sign-in link",
		"memstore serve --db postgres://memstore:PASSWORD@db/memstore --addr :6366",
	},
	"mcp": {
		"MEMSTORE_TOKEN=st-memstore-... memstore mcp --url http://127.0.0.1:6366",
		"memstore mcp --db notes.db --store memstore_01...:ro --instructions 'read before answering'",
	},
	"keys": {
		"memstore keys create --name laptop",
		"memstore keys ls --json",
		"memstore keys revoke apikey_01...",
	},
	"users": {
		"memstore users create --name ada --role admin",
		"memstore users create --name bob --link --console-url https://memory.example.com/console/",
		"memstore users passwd ada",
	},
	"webhooks": {
		"memstore webhooks create --endpoint-url https://hooks.example.com/memstore --event memstore.memory.created --event memstore.memory.modified",
		"memstore webhooks enable webhook_01...   # again, after it was disabled for failing",
		"memstore webhooks deliveries webhook_01...",
	},
	"healthcheck": {
		"memstore healthcheck --url http://127.0.0.1:6366",
		"MEMSTORE_ADDR=0.0.0.0:6366 memstore healthcheck   # as the image's HEALTHCHECK: asks 127.0.0.1",
	},
	"completion": {
		"source <(memstore completion bash)   # in ~/.bashrc",
		"memstore completion fish > ~/.config/fish/completions/memstore.fish",
	},
	"vacuum": {
		"memstore vacuum --db notes.db",
		"memstore vacuum --db notes.db --full --json",
	},
	"tool": {
		`echo '{"command":"view","path":"/memories"}' | memstore tool --root ./memories`,
		"memstore tool --url http://127.0.0.1:6366 --token \"$MEMSTORE_TOKEN\"",
		"memstore tool prune --root ./memories --older-than 30d --dry-run",
	},
	"stores": {
		"memstore stores",
		"memstore stores create notes --description 'What the team learned'",
	},
	"stores ls":      {"memstore stores ls --archived --json"},
	"stores create":  {"memstore stores create notes --description 'What the team learned' --metadata team=infra"},
	"stores show":    {"memstore stores show memstore_01..."},
	"stores update":  {"memstore stores update memstore_01... --name team-notes --unset-metadata team"},
	"stores archive": {"memstore stores archive memstore_01..."},
	"stores rm":      {"memstore stores rm memstore_01... --yes"},
	"stores diff": {
		"memstore stores diff notes 'notes (dream drm_01...)'",
		"memstore stores diff memstore_01... memstore_02... --stat --json",
	},
	"ls": {
		"memstore ls",
		"memstore ls /projects/ --depth 0 --json",
	},
	"cat": {
		"memstore cat /preferences.md",
		"memstore cat --raw /preferences.md > preferences.md",
	},
	"put": {
		"memstore put /preferences.md preferences.md",
		"echo '- tabs, not spaces' | memstore put /style.md",
	},
	"edit": {"memstore edit /preferences.md", "EDITOR=nano memstore edit /projects/new.md"},
	"mv":   {"memstore mv /notes.md /archive/notes.md", "memstore mv /todo.md /done/"},
	"rm":   {"memstore rm /old.md", "memstore rm /old.md --if-sha256 \"$(sha256sum old.md | cut -c1-64)\""},
	"log":  {"memstore log /preferences.md", "memstore log --json mem_01..."},
	"show": {"memstore show memver_01...", "memstore show --raw memver_01... > old.md"},
	"diff": {"memstore diff memver_01...", "memstore diff memver_01... memver_02..."},
	"redact": {
		"memstore redact memver_01...",
	},
	"grep": {
		"memstore grep deploy",
		"memstore grep 'release checklist' --prefix /projects/ --limit 5 --json",
	},
	"watch": {
		"memstore watch",
		"memstore watch --from-start --json",
	},
	"dream": {
		"memstore dream --store notes --session sesn_01... --session sesn_02... --wait",
		"memstore dream --store notes --session sesn_01...,sesn_02... --instructions 'merge duplicates; drop stale facts' --wait --json",
		"memstore dream --store notes --session sesn_01... --update-existing",
	},
	"dreams": {
		"memstore dreams",
		"memstore dreams get drm_01... --diff",
	},
	"dreams ls":      {"memstore dreams ls --status running --status pending --json"},
	"dreams get":     {"memstore dreams get drm_01... --diff"},
	"dreams cancel":  {"memstore dreams cancel drm_01... --yes"},
	"dreams archive": {"memstore dreams archive drm_01... --yes"},
	"sessions": {
		"memstore sessions create --store memstore_01... --store memstore_02...:ro --title 'nightly agent'",
		"memstore sessions ls",
	},
	"sessions create": {
		"memstore sessions create --store memstore_01... --instructions 'team conventions' --expires-in 8h",
		"export MEMSTORE_TOKEN=$(memstore sessions create --store memstore_01... | tail -1)",
	},
	"sessions ls":     {"memstore sessions ls --store memstore_01... --archived"},
	"sessions show":   {"memstore sessions show sesn_01..."},
	"sessions token":  {"memstore sessions token sesn_01... --expires-in 1h"},
	"sessions revoke": {"memstore sessions revoke sesntok_01...", "memstore sessions revoke sesn_01..."},
	"sessions update": {"memstore sessions update sesn_01... --title 'nightly agent' --metadata owner=ada"},
	"sessions attach": {"memstore sessions attach sesn_01... --store memstore_02...:ro"},
	"sessions detach": {"memstore sessions detach sesn_01... --store memstore_02..."},
	"sessions rm":     {"memstore sessions rm sesn_01..."},
	"export": {
		"memstore export ./notes-backup",
		"memstore export --store memstore_01... - > notes.jsonl",
	},
	"import": {
		"memstore import ./notes-backup",
		"memstore import --store memstore_01... notes.jsonl",
	},
	"migrate": {
		"memstore migrate --from memstore.db --to postgres://memstore:PASSWORD@db/memstore",
		"memstore migrate --from postgres://memstore:PASSWORD@db/memstore --to copy.db --snapshot",
	},
	"claude": {
		"memstore claude",
		"memstore claude --store team-notes --store handbook:ro -- -p 'what did we decide about deploys?'",
	},
	"memdir": {
		"memstore memdir path",
		"memstore memdir sync --store memstore_01... --url http://127.0.0.1:6366 --api-key \"$MEMSTORE_API_KEY\"",
	},
	"memdir path":   {"memstore memdir path", "memstore memdir path --log --date 2026-11-28"},
	"memdir prompt": {"memstore memdir prompt", "memstore memdir prompt --hook session-start"},
	"memdir log":    {"memstore memdir log 'moved the deploy to Fridays'"},
	"memdir lint":   {"memstore memdir lint", "memstore memdir lint --fix"},
	"memdir recall": {"memstore memdir recall 'deploy checklist'", "memstore memdir recall --limit 3 --body deploy"},
	"memdir sync": {
		"memstore memdir sync --store memstore_01... --url http://127.0.0.1:6366 --api-key \"$MEMSTORE_API_KEY\"",
		"memstore memdir sync --scope team --watch --store memstore_01... --url http://127.0.0.1:6366 --token \"$MEMSTORE_TOKEN\"",
	},
	"memdir dream":           {"memstore memdir dream --dry-run", "memstore memdir dream --model claude-opus-4-8"},
	"memdir extract":         {"memstore memdir extract --transcript ~/.claude/projects/-home-me-app/SESSION.jsonl"},
	"memdir snapshot create": {"memstore memdir snapshot create", "memstore memdir snapshot create --agent reviewer --scope project"},
	"memdir snapshot apply":  {"memstore memdir snapshot apply", "memstore memdir snapshot apply --yes"},
	"bench": {
		"memstore bench --url http://127.0.0.1:6366 --api-key \"$MEMSTORE_API_KEY\"",
		"memstore bench --url http://127.0.0.1:6366 --api-key \"$MEMSTORE_API_KEY\" --mix write --concurrency 32 --duration 30s",
		"memstore bench --url http://127.0.0.1:6366 --api-key \"$MEMSTORE_API_KEY\" --compare http://127.0.0.1:6399 --mix write --rounds 5",
	},
	"bench recall": {"memstore bench recall --generate 24", "memstore bench recall --conversations chats.json --misses", "memstore bench recall --docs docs.jsonl --queries queries.jsonl --k 5,10 --misses"},
	"version":      {"memstore version", "memstore version --json"},
}
