// Checks memstore's /v1/dreams with the official TypeScript SDK
// (@anthropic-ai/sdk, as package.json pins it): client.beta.dreams
// create, retrieve, list (paged), cancel and archive, as the SDK sends
// them, and a bad create refused. Run by httpapi's contract_ts_test.go:
//
//	MEMSTORE_URL=http://127.0.0.1:PORT MEMSTORE_API_KEY=sk-memstore-... node dreams.mjs
//
// Every check throws on failure; the script exits 1 with the failed check
// on stderr, or 0 after printing "ok".

import Anthropic from '@anthropic-ai/sdk';
import assert from 'node:assert/strict';

const baseURL = process.env.MEMSTORE_URL;
const apiKey = process.env.MEMSTORE_API_KEY;
if (!baseURL || !apiKey) {
  console.error('MEMSTORE_URL and MEMSTORE_API_KEY must be set');
  process.exit(2);
}
const client = new Anthropic({ apiKey, baseURL, maxRetries: 0 });

const store = await client.beta.memoryStores.create({ name: 'TS dream notes' });
const sessions = [];
for (let i = 0; i < 2; i++) {
  sessions.push((await client.beta.sessions.create({ agent: 'agent_ts', environment_id: 'env_ts' })).id);
}
const inputs = [
  { type: 'memory_store', memory_store_id: store.id },
  { type: 'sessions', session_ids: [...sessions].reverse() },
];

const d = await client.beta.dreams.create({ inputs, model: 'claude-test', instructions: 'Merge duplicates.' });
assert.match(d.id, /^drm_/);
assert.equal(d.type, 'dream');
assert.equal(d.status, 'pending');
assert.deepEqual(d.outputs, []);
assert.equal(d.session_id, null);
assert.equal(d.error, null);
assert.equal(d.ended_at, null);
assert.equal(d.archived_at, null);
assert.deepEqual(d.model, { id: 'claude-test', speed: 'standard' });
assert.deepEqual(d.output_behavior, { type: 'create_new' });
assert.deepEqual(d.inputs[1].session_ids, [...sessions].sort());
assert.deepEqual(d.usage, { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
assert.deepEqual(await client.beta.dreams.retrieve(d.id), d);

const u = await client.beta.dreams.create({
  inputs,
  model: { id: 'claude-test', speed: 'standard' },
  output_behavior: { type: 'update_existing', memory_store_id: store.id },
});
assert.deepEqual(u.output_behavior, { type: 'update_existing', memory_store_id: store.id });
assert.equal(u.instructions, null);

// Newest first, a page at a time.
const ids = [];
for await (const x of client.beta.dreams.list({ limit: 1 })) ids.push(x.id);
assert.deepEqual(ids, [u.id, d.id]);

const c = await client.beta.dreams.cancel(d.id);
assert.equal(c.status, 'canceled');
assert.ok(c.ended_at);
const a = await client.beta.dreams.archive(d.id);
assert.ok(a.archived_at);
const live = [];
for await (const x of client.beta.dreams.list()) live.push(x.id);
assert.deepEqual(live, [u.id]);
const canceled = [];
for await (const x of client.beta.dreams.list({ include_archived: true, statuses: ['canceled'] })) canceled.push(x.id);
assert.deepEqual(canceled, [d.id]);

let err;
try {
  await client.beta.dreams.create({ inputs, model: { id: 'claude-test', speed: 'fast' } });
} catch (e) {
  err = e;
}
assert.ok(err instanceof Anthropic.BadRequestError, `a fast dream: ${err}`);
assert.equal(err.error?.error?.type, 'invalid_request_error');
assert.match(err.error?.error?.message ?? '', /model\.speed must be standard/);

console.log(`ok: client.beta.dreams created, listed, canceled and archived ${ids.length} dreams`);
