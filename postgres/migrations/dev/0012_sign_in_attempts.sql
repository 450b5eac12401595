-- The console's sign-in attempts, counted where every server on the
-- database sees them: a token bucket per key, the SHA-256 of a user
-- name with its workspace or of a client address, never the name or the
-- address itself. A count whose full_at has passed has refilled, is as
-- good as none, and is deleted. (IF NOT EXISTS: a database taken back
-- to an earlier migration by the upgrade tests runs this one again.)

CREATE TABLE IF NOT EXISTS sign_in_attempts (
	key_sha256 text COLLATE "C" PRIMARY KEY,
	tokens     double precision NOT NULL,
	at         bigint NOT NULL,
	full_at    bigint NOT NULL
);

CREATE INDEX IF NOT EXISTS sign_in_attempts_by_full ON sign_in_attempts (full_at);
