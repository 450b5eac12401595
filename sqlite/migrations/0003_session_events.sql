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
	PRIMARY KEY (session_id, seq)
) STRICT, WITHOUT ROWID;
