// Drives a memstore server with the official TypeScript SDK
// (@anthropic-ai/sdk 1.14.0, as package.json pins it), pointed at the server
// only by its base URL. Run by httpapi's contract_ts_test.go:
//
//	MEMSTORE_URL=http://127.0.0.1:PORT MEMSTORE_API_KEY=sk-memstore-... node script.mjs
//
// Every check throws on failure; the script exits 1 with the failed check
// on stderr, or 0 after printing "ok" and the number of requests it made.

import Anthropic, {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  NotFoundError,
} from '@anthropic-ai/sdk';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

const baseURL = process.env.MEMSTORE_URL;
const apiKey = process.env.MEMSTORE_API_KEY;
if (!baseURL || !apiKey) {
  console.error('MEMSTORE_URL and MEMSTORE_API_KEY must be set');
  process.exit(2);
}

// Every request the SDK sends, to check what it sends and count retries.
const sent = [];
const recordingFetch = async (url, init) => {
  sent.push({ url: String(url), method: init?.method ?? 'GET', headers: new Headers(init?.headers) });
  return fetch(url, init);
};

const client = new Anthropic({ apiKey, baseURL, fetch: recordingFetch });
const sha256 = (s) => createHash('sha256').update(s, 'utf8').digest('hex');

// expectError runs fn, which must fail with an error of class cls, HTTP
// status and error.type type, in exactly one request (a 409 carries
// x-should-retry: false, so the SDK must not retry it). It returns the
// error's body.
async function expectError(what, cls, status, type, fn) {
  const before = sent.length;
  let err;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err, `${what}: succeeded, want ${cls.name}`);
  assert.ok(err instanceof cls, `${what}: ${err?.constructor?.name}: ${err?.message}, want ${cls.name}`);
  assert.equal(err.status, status, `${what}: status`);
  assert.equal(err.type, type, `${what}: error type`);
  assert.ok(err.apiMessage, `${what}: no error message`);
  assert.equal(sent.length - before, 1, `${what}: ${sent.length - before} requests, want 1 (no retry)`);
  return err.error;
}

async function collect(iterable) {
  const items = [];
  for await (const item of iterable) items.push(item);
  return items;
}

// --- What the SDK sends: Bearer auth, its own API version, the memory beta,
// and no ?beta=true (the server must take all of it).
const store = await client.beta.memoryStores.create({
  name: 'TS SDK store',
  description: 'made by the TypeScript SDK',
  metadata: { owner: 'ts', drop: 'me' },
});
{
  const first = sent[0];
  assert.equal(first.headers.get('authorization'), `Bearer ${apiKey}`);
  assert.equal(first.headers.get('x-api-key'), null);
  assert.equal(first.headers.get('anthropic-version'), '2026-10-21');
  assert.match(first.headers.get('anthropic-beta') ?? '', /agent-memory-2026-07-22/);
  assert.ok(!first.url.includes('beta=true'), first.url);
}

// --- Stores.
assert.equal(store.type, 'memory_store');
assert.match(store.id, /^memstore_/);
assert.equal(store.name, 'TS SDK store');
assert.equal(store.description, 'made by the TypeScript SDK');
assert.deepEqual(store.metadata, { owner: 'ts', drop: 'me' });
assert.equal(store.archived_at, null);

const got = await client.beta.memoryStores.retrieve(store.id);
assert.deepEqual(got, store);

// A metadata value of null removes the key; description null leaves it.
const updated = await client.beta.memoryStores.update(store.id, {
  name: 'TS SDK store, renamed',
  description: null,
  metadata: { drop: null, added: 'yes' },
});
assert.equal(updated.name, 'TS SDK store, renamed');
assert.equal(updated.description, 'made by the TypeScript SDK');
assert.deepEqual(updated.metadata, { owner: 'ts', added: 'yes' });

// Auto-iteration over several pages, newest first.
const more = [];
for (let i = 0; i < 4; i++) more.push((await client.beta.memoryStores.create({ name: `extra ${i}` })).id);
{
  const before = sent.length;
  const ids = (await collect(client.beta.memoryStores.list({ limit: 2 }))).map((s) => s.id);
  assert.deepEqual(ids, [...more].reverse().concat([store.id]));
  assert.equal(sent.length - before, 3, 'five stores at two per page: three requests');
}
{
  const page = await client.beta.memoryStores.list({ limit: 2 });
  assert.equal(page.data.length, 2);
  assert.ok(page.hasNextPage());
  const created = new Date(store.created_at);
  const since = await collect(client.beta.memoryStores.list({ 'created_at[gte]': created.toISOString() }));
  assert.ok(since.some((s) => s.id === store.id), 'created_at[gte] is inclusive');
}

// --- Memories.
const sid = store.id;
const m = await client.beta.memoryStores.memories.create(sid, { path: '/notes/a.md', content: 'hello' });
assert.equal(m.type, 'memory');
assert.match(m.id, /^mem_/);
assert.equal(m.memory_store_id, sid);
assert.equal(m.path, '/notes/a.md');
assert.equal(m.content, null, 'create answers in the basic view by default');
assert.equal(m.content_sha256, sha256('hello'));
assert.equal(m.content_size_bytes, 5);
assert.match(m.memory_version_id, /^memver_/);

const full = await client.beta.memoryStores.memories.create(sid, { path: '/notes/ünï.md', content: 'crlf\r\n', view: 'full' });
assert.equal(full.content, 'crlf\r\n');
assert.equal(full.content_sha256, sha256('crlf\r\n'));

const read = await client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: sid });
assert.equal(read.content, 'hello', 'retrieve answers in the full view by default');

const m2 = await client.beta.memoryStores.memories.update(m.id, {
  memory_store_id: sid,
  content: 'hello, again',
  precondition: { type: 'content_sha256', content_sha256: sha256('hello') },
});
assert.equal(m2.content_sha256, sha256('hello, again'));
assert.notEqual(m2.memory_version_id, m.memory_version_id);

await expectError('stale precondition', ConflictError, 409, 'memory_precondition_failed_error', () =>
  client.beta.memoryStores.memories.update(m.id, {
    memory_store_id: sid,
    content: 'lost update',
    precondition: { type: 'content_sha256', content_sha256: sha256('hello') },
  }),
);
{
  const body = await expectError('taken path', ConflictError, 409, 'memory_path_conflict_error', () =>
    client.beta.memoryStores.memories.create(sid, { path: '/notes/a.md', content: 'again' }),
  );
  assert.equal(body.error.conflicting_memory_id, m.id);
  assert.equal(body.error.conflicting_path, '/notes/a.md');
}
{
  const body = await expectError('ancestor path', ConflictError, 409, 'memory_path_conflict_error', () =>
    client.beta.memoryStores.memories.create(sid, { path: '/notes/a.md/below', content: 'x' }),
  );
  assert.equal(body.error.conflicting_memory_id, m.id);
}
await expectError('relative path', BadRequestError, 400, 'invalid_request_error', () =>
  client.beta.memoryStores.memories.create(sid, { path: 'relative.md', content: 'x' }),
);

// Rename.
const renamed = await client.beta.memoryStores.memories.update(m.id, { memory_store_id: sid, path: '/archive/a.md' });
assert.equal(renamed.path, '/archive/a.md');
assert.equal(renamed.id, m.id);

// Lists: auto-iteration, depth, full view.
for (let i = 0; i < 23; i++) {
  await client.beta.memoryStores.memories.create(sid, { path: `/bulk/${String(i).padStart(2, '0')}.md`, content: `bulk ${i}` });
}
{
  const before = sent.length;
  const items = await collect(client.beta.memoryStores.memories.list(sid, { limit: 10 }));
  assert.equal(items.length, 25);
  assert.equal(sent.length - before, 3);
  const paths = items.map((it) => it.path);
  assert.deepEqual(paths, [...paths].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))), 'byte order');
  assert.ok(items.every((it) => it.type === 'memory' && it.content === null));
}
{
  const top = await collect(client.beta.memoryStores.memories.list(sid, { path_prefix: '/', depth: 1 }));
  assert.deepEqual(
    top.map((it) => `${it.type} ${it.path}`),
    ['memory_prefix /archive/', 'memory_prefix /bulk/', 'memory_prefix /notes/'],
  );
  const bulk = await collect(client.beta.memoryStores.memories.list(sid, { path_prefix: '/bulk/', view: 'full', limit: 20 }));
  assert.equal(bulk.length, 23);
  for (const it of bulk) assert.equal(it.content_sha256, sha256(it.content));
}

// Delete with a precondition.
await expectError('delete with a stale hash', ConflictError, 409, 'memory_precondition_failed_error', () =>
  client.beta.memoryStores.memories.delete(m.id, { memory_store_id: sid, expected_content_sha256: sha256('hello') }),
);
const deleted = await client.beta.memoryStores.memories.delete(m.id, {
  memory_store_id: sid,
  expected_content_sha256: sha256('hello, again'),
});
assert.deepEqual(deleted, { type: 'memory_deleted', id: m.id });
await expectError('deleted memory', NotFoundError, 404, 'not_found_error', () =>
  client.beta.memoryStores.memories.retrieve(m.id, { memory_store_id: sid }),
);

// --- Versions.
const versions = await collect(client.beta.memoryStores.memoryVersions.list(sid, { memory_id: m.id }));
assert.deepEqual(
  versions.map((v) => v.operation),
  ['deleted', 'modified', 'modified', 'created'],
);
for (const v of versions) {
  assert.equal(v.type, 'memory_version');
  assert.equal(v.memory_id, m.id);
  assert.equal(v.content, null, 'lists answer in the basic view');
  assert.equal(v.created_by.type, 'api_actor');
  assert.match(v.created_by.api_key_id, /^apikey_/);
}
assert.equal(versions[0].path, '/archive/a.md');
assert.equal(versions[0].content_sha256, null);
{
  const created = await collect(client.beta.memoryStores.memoryVersions.list(sid, { operation: 'created', limit: 100 }));
  assert.equal(created.length, 25);
  const byKey = await collect(
    client.beta.memoryStores.memoryVersions.list(sid, { api_key_id: versions[0].created_by.api_key_id, limit: 7 }),
  );
  assert.equal(byKey.length, 28, 'every version so far was written with this key');
  const none = await collect(client.beta.memoryStores.memoryVersions.list(sid, { service_account_id: 'svac_nobody' }));
  assert.equal(none.length, 0);
}
const first = versions[3];
const v1 = await client.beta.memoryStores.memoryVersions.retrieve(first.id, { memory_store_id: sid });
assert.equal(v1.content, 'hello', 'retrieve answers in the full view');
assert.equal(v1.path, '/notes/a.md');

const redacted = await client.beta.memoryStores.memoryVersions.redact(first.id, { memory_store_id: sid });
assert.equal(redacted.id, first.id);
for (const k of ['path', 'content', 'content_sha256', 'content_size_bytes']) {
  assert.equal(redacted[k], null, `redacted ${k}`);
}
assert.ok(redacted.redacted_at);
assert.equal(redacted.redacted_by.type, 'api_actor');
assert.deepEqual(redacted.created_by, first.created_by);
assert.deepEqual(await client.beta.memoryStores.memoryVersions.retrieve(first.id, { memory_store_id: sid }), redacted);

// --- A failed not_exists create (Claude Code's) names the memory in the way.
{
  const held = await client.beta.memoryStores.memories.create(sid, { path: '/held/a.md', content: 'held' });
  const body = await expectError('not_exists on a taken path', ConflictError, 409, 'memory_precondition_failed_error', () =>
    client.beta.memoryStores.memories.create(sid, { path: '/held', content: 'x', precondition: { type: 'not_exists' } }),
  );
  assert.equal(body.error.conflicting_memory_id, held.id);
  assert.equal(body.error.conflicting_path, '/held/a.md');
}

// --- Archive, then delete. Writes to an archived store, deletes
// included, are the hosted API's 400.
const archived = await client.beta.memoryStores.archive(sid);
assert.ok(archived.archived_at);
{
  const late = await client.beta.memoryStores.memories.list(sid, { path_prefix: '/held/' });
  const heldID = late.data[0].id;
  for (const [what, fn] of [
    ['create', () => client.beta.memoryStores.memories.create(sid, { path: '/late.md', content: 'x' })],
    ['update', () => client.beta.memoryStores.memories.update(heldID, { memory_store_id: sid, content: 'y' })],
    ['delete', () => client.beta.memoryStores.memories.delete(heldID, { memory_store_id: sid })],
    ['store update', () => client.beta.memoryStores.update(sid, { name: 'renamed' })],
  ]) {
    const body = await expectError(`${what} in an archived store`, BadRequestError, 400, 'invalid_request_error', fn);
    assert.ok(body.error.message.startsWith('cannot modify archived resource'), `${what}: ${body.error.message}`);
  }
}
{
  const visible = (await collect(client.beta.memoryStores.list())).map((s) => s.id);
  assert.ok(!visible.includes(sid), 'archived stores are hidden by default');
  const all = (await collect(client.beta.memoryStores.list({ include_archived: true }))).map((s) => s.id);
  assert.ok(all.includes(sid));
}
const gone = await client.beta.memoryStores.delete(sid);
assert.deepEqual(gone, { type: 'memory_store_deleted', id: sid });
await expectError('deleted store', NotFoundError, 404, 'not_found_error', () => client.beta.memoryStores.retrieve(sid));

// --- Sessions: every method of client.beta.sessions and its resources;
// events and threads are a 404, as memstore runs no agent.
{
  const st = await client.beta.memoryStores.create({ name: 'TS notes' });
  const st2 = await client.beta.memoryStores.create({ name: 'TS prefs' });
  const sess = await client.beta.sessions.create({
    agent: 'agent_ts',
    environment_id: 'env_ts',
    title: 'ts',
    metadata: { keep: '1', drop: '2' },
    resources: [{ type: 'memory_store', memory_store_id: st.id }],
  });
  assert.equal(sess.status, 'idle');
  assert.equal(sess.agent.id, 'agent_ts');
  for (const k of ['budget', 'vault_ids', 'stats', 'usage', 'outcome_evaluations', 'environment_id']) {
    assert.ok(k in sess, `the session lacks ${k}`);
  }
  assert.equal((await client.beta.sessions.retrieve(sess.id)).id, sess.id);
  const up = await client.beta.sessions.update(sess.id, { title: 'ts 2', metadata: { drop: null, new: '3' } });
  assert.equal(up.title, 'ts 2');
  assert.deepEqual(up.metadata, { keep: '1', new: '3' });

  const listed = (await collect(client.beta.sessions.list({ statuses: ['idle'], order: 'asc', agent_id: 'agent_ts' }))).map((s) => s.id);
  assert.deepEqual(listed, [sess.id]);
  await expectError('a filter memstore cannot honour', BadRequestError, 400, 'invalid_request_error', () =>
    client.beta.sessions.list({ deployment_id: 'dep_1' }),
  );

  const res = await collect(client.beta.sessions.resources.list(sess.id));
  assert.deepEqual(res.map((r) => r.memory_store_id), [st.id]);
  const added = await client.beta.sessions.resources.add(sess.id, { type: 'memory_store', memory_store_id: st2.id });
  assert.equal(added.id, st2.id);
  assert.equal(added.mount_path, '/mnt/memory/ts-prefs');
  const got = await client.beta.sessions.resources.retrieve(st2.id, { session_id: sess.id });
  assert.equal(got.access, 'read_write');
  const ro = await client.beta.sessions.resources.update(st2.id, { session_id: sess.id, access: 'read_only' });
  assert.equal(ro.access, 'read_only');
  const detached = await client.beta.sessions.resources.delete(st.id, { session_id: sess.id });
  assert.deepEqual(detached, { type: 'session_resource_deleted', id: st.id });
  await expectError('a file resource', BadRequestError, 400, 'invalid_request_error', () =>
    client.beta.sessions.resources.add(sess.id, { type: 'file', file_id: 'file_1' }),
  );

  // A session's transcript: send, list, and a stream opened first.
  const stream = await client.beta.sessions.events.stream(sess.id);
  const sentEvents = await client.beta.sessions.events.send(sess.id, {
    events: [{ type: 'user.message', content: [{ type: 'text', text: 'from ts' }] }],
  });
  assert.equal(sentEvents.data.length, 1);
  assert.equal(sentEvents.data[0].type, 'user.message');
  assert.ok(sentEvents.data[0].id.startsWith('sevt_'), sentEvents.data[0].id);
  assert.equal(sentEvents.data[0].content[0].text, 'from ts');
  const evs = await collect(client.beta.sessions.events.list(sess.id));
  assert.deepEqual(evs.map((e) => [e.id, e.type]), [[sentEvents.data[0].id, 'user.message']]);
  for await (const ev of stream) {
    assert.equal(ev.id, sentEvents.data[0].id);
    assert.equal(ev.type, 'user.message');
    break;
  }
  await expectError('events.send of an agent event', BadRequestError, 400, 'invalid_request_error', () =>
    client.beta.sessions.events.send(sess.id, { events: [{ type: 'agent.message', content: [] }] }),
  );
  await expectError('threads.list', NotFoundError, 404, 'not_found_error', () => client.beta.sessions.threads.list(sess.id));
  await expectError('threads.retrieve', NotFoundError, 404, 'not_found_error', () =>
    client.beta.sessions.threads.retrieve('thr_1', { session_id: sess.id }),
  );
  await expectError('threads.archive', NotFoundError, 404, 'not_found_error', () =>
    client.beta.sessions.threads.archive('thr_1', { session_id: sess.id }),
  );
  await expectError('threads.events.list', NotFoundError, 404, 'not_found_error', () =>
    client.beta.sessions.threads.events.list('thr_1', { session_id: sess.id }),
  );
  await expectError('threads.events.stream', NotFoundError, 404, 'not_found_error', () =>
    client.beta.sessions.threads.events.stream('thr_1', { session_id: sess.id }),
  );

  const archivedSession = await client.beta.sessions.archive(sess.id);
  assert.equal(archivedSession.status, 'terminated');
  const deleted = await client.beta.sessions.delete(sess.id);
  assert.deepEqual(deleted, { type: 'session_deleted', id: sess.id });
  await expectError('a deleted session', NotFoundError, 404, 'not_found_error', () => client.beta.sessions.retrieve(sess.id));
}

// --- A wrong key.
const stranger = new Anthropic({ apiKey: 'sk-memstore-not-a-key', baseURL, fetch: recordingFetch });
await expectError('unknown key', AuthenticationError, 401, 'authentication_error', () => stranger.beta.memoryStores.list());

console.log(`ok: ${sent.length} requests`);
