-- The quotas of live sessions per workspace and of live tokens per
-- session (memstore's quota.go) count, in the transaction of each
-- create, only what is live: these partial indexes hold nothing else, so
-- that the count costs what the limit allows, however many archived
-- sessions and revoked tokens are kept. (IF NOT EXISTS: a database taken
-- back to an older migration runs this again.)

CREATE INDEX IF NOT EXISTS sessions_live ON sessions (workspace_id) WHERE archived_at IS NULL;

CREATE INDEX IF NOT EXISTS session_tokens_live ON session_tokens (session_id, expires_at) WHERE revoked_at IS NULL;
