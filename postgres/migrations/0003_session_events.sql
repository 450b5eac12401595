-- The transcripts of sessions (memstore's event.go): each event of a
-- session, numbered from 1 in the order of its append, which holds the
-- session's row. Append-only: nothing updates a row; the rows go with
-- their session (ON DELETE CASCADE). body is the event's JSON object as
-- kept (text, so that it reads back as it was written), type included,
-- without its id and processed_at.
CREATE TABLE session_events (
	session_id   text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq          bigint NOT NULL,
	id           text COLLATE "C" NOT NULL,
	workspace_id text COLLATE "C" NOT NULL,
	type         text COLLATE "C" NOT NULL,
	body         text NOT NULL,
	processed_at bigint NOT NULL,
	tool_use_id  text COLLATE "C", -- an agent.tool_use's block ID, for the results of later turns
	PRIMARY KEY (session_id, seq)
);

-- A tool result finds the event of the tool use it answers in one probe.
CREATE INDEX session_events_tool_use ON session_events (session_id, tool_use_id) WHERE tool_use_id IS NOT NULL;
