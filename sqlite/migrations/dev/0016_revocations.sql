-- Revocations between processes (revoke.go): the transaction of each
-- revocation (a key or token revoked, a session archived or deleted, a
-- session's stores changed) adds a row, and every server on the file
-- reads the rows added since it last looked, so that it ends what
-- another process's revocation stopped within moments, as it does for
-- its own. Only the newest rows are kept.
CREATE TABLE revocations (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT, -- numbered without gaps: a gap is a row pruned unread
	origin     TEXT NOT NULL,                     -- the handle that revoked, whose listeners heard at once
	api_key_id TEXT NOT NULL DEFAULT '',
	session_id TEXT NOT NULL DEFAULT '',
	token_id   TEXT NOT NULL DEFAULT '',
	refresh    INTEGER NOT NULL DEFAULT 0 CHECK (refresh IN (0, 1))
) STRICT;
