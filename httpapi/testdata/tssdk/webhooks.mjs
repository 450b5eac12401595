// Checks memstore's webhooks with the official TypeScript SDK
// (@anthropic-ai/sdk, as package.json pins it): it makes an endpoint with
// client.beta.organization.webhooks, receives the deliveries of a store
// and a memory it creates (the hosted API's memory_store.created and
// memstore's own memstore.memory.created) on a receiver of its own, and
// verifies them with client.beta.webhooks.unwrap. Run by httpapi's contract_ts_test.go:
//
//	MEMSTORE_URL=http://127.0.0.1:PORT MEMSTORE_API_KEY=sk-memstore-... node webhooks.mjs
//
// Every check throws on failure; the script exits 1 with the failed check
// on stderr, or 0 after printing "ok".

import Anthropic from '@anthropic-ai/sdk';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';

const baseURL = process.env.MEMSTORE_URL;
const apiKey = process.env.MEMSTORE_API_KEY;
if (!baseURL || !apiKey) {
  console.error('MEMSTORE_URL and MEMSTORE_API_KEY must be set');
  process.exit(2);
}
const client = new Anthropic({ apiKey, baseURL });

// The receiver keeps each delivery's body and headers, by event type.
const want = ['memory_store.created', 'memstore.memory.created'];
const got = {};
let deliver;
const delivered = new Promise((resolve) => (deliver = resolve));
const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    res.writeHead(204).end();
    got[JSON.parse(body).data.type] = { body, headers: req.headers };
    if (want.every((t) => t in got)) deliver();
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/hooks`;

const hook = await client.beta.organization.webhooks.create({ url, enabled_events: want });
assert.match(hook.signing_secret, /^whsec_/);
assert.equal(hook.state, 'enabled');
const retrieved = await client.beta.organization.webhooks.retrieve(hook.id);
assert.equal(retrieved.signing_secret, undefined, 'retrieve shows no secret');

const store = await client.beta.memoryStores.create({ name: 'TS webhooks' });
const memory = await client.beta.memoryStores.memories.create(store.id, { path: '/a.md', content: 'secret content' });
let timer;
await Promise.race([
  delivered,
  new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`deliveries within 10s: ${Object.keys(got)}`)), 10000))),
]);
clearTimeout(timer);
server.close();

const events = want.map((t) => {
  const { body, headers } = got[t];
  assert.ok(!body.includes('secret content'), `${t} holds the memory's content`);
  const event = client.beta.webhooks.unwrap(body, { headers, key: hook.signing_secret });
  assert.equal(event.type, 'event');
  assert.equal(event.id, headers['webhook-id']);
  assert.equal(event.data.type, t);
  return event;
});
assert.equal(events[0].data.id, store.id);
assert.equal(events[1].data.id, memory.id);
assert.equal(events[1].data.memory_store_id, store.id);
assert.equal(events[1].data.memory_version_id, memory.memory_version_id);
const d = got['memory_store.created'];

// A changed body, or another key, is refused.
assert.throws(() => client.beta.webhooks.unwrap(d.body.replace(store.id, 'memstore_other'), { headers: d.headers, key: hook.signing_secret }));
const other = await client.beta.organization.webhooks.regenerateSigningSecret(hook.id);
assert.throws(() => client.beta.webhooks.unwrap(d.body, { headers: d.headers, key: other.signing_secret }));

await client.beta.organization.webhooks.delete(hook.id);
console.log('ok: unwrap verified the deliveries of', want.join(' and '));
