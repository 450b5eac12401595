-- The agent a session's kept fields name, by memstore.SessionAgentID's
-- rule (the agent field when a string, else its id), which the list of
-- sessions by agent compares: NULL, matching no agent, when PostgreSQL's
-- JSON functions cannot read the fields, as for the escape \u0000 or an
-- unpaired surrogate, which memstore refuses now but kept before. Such a
-- session fails no list of the others.
CREATE OR REPLACE FUNCTION session_agent_id(fields text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
	agent jsonb;
BEGIN
	agent := fields::jsonb -> 'agent';
	RETURN CASE jsonb_typeof(agent) WHEN 'string' THEN agent #>> '{}' WHEN 'object' THEN agent ->> 'id' END;
EXCEPTION WHEN untranslatable_character OR invalid_text_representation THEN
	RETURN NULL;
END $$;
