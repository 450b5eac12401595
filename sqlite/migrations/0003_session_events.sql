-- The transcripts of sessions (memstore's event.go): each event of a
-- session, numbered from 1 in the order of its append. Append-only:
-- nothing updates a row; the rows go with their session (ON DELETE
-- CASCADE), and secure_delete zeroes them. body is the event's JSON
-- object as kept, type included, without its id and processed_at.
CREATE TABLE session_events (
	session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	id           TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	type         TEXT NOT NULL,
	body         TEXT NOT NULL,
	processed_at INTEGER NOT NULL,
	tool_use_id  TEXT, -- an agent.tool_use's block ID, for the results of later turns
	PRIMARY KEY (session_id, seq)
) STRICT, WITHOUT ROWID;

-- A tool result finds the event of the tool use it answers in one probe.
CREATE INDEX session_events_tool_use ON session_events (session_id, tool_use_id) WHERE tool_use_id IS NOT NULL;
