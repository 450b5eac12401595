// Checks memstore's webhooks with the official TypeScript SDK
// (@anthropic-ai/sdk, as package.json pins it): it makes an endpoint with
// client.beta.organization.webhooks, receives the delivery of a store it
// creates on a receiver of its own, and verifies it with
// client.beta.webhooks.unwrap. Run by httpapi's contract_ts_test.go:
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

// The receiver keeps each delivery's body and headers.
let deliver;
const delivered = new Promise((resolve) => (deliver = resolve));
const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    res.writeHead(204).end();
    deliver({ body, headers: req.headers });
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/hooks`;

const hook = await client.beta.organization.webhooks.create({ url, enabled_events: ['memory_store.created'] });
assert.match(hook.signing_secret, /^whsec_/);
assert.equal(hook.state, 'enabled');
const got = await client.beta.organization.webhooks.retrieve(hook.id);
assert.equal(got.signing_secret, undefined, 'retrieve shows no secret');

const store = await client.beta.memoryStores.create({ name: 'TS webhooks' });
let timer;
const d = await Promise.race([
  delivered,
  new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('no delivery within 10s')), 10000))),
]);
clearTimeout(timer);
server.close();

const event = client.beta.webhooks.unwrap(d.body, { headers: d.headers, key: hook.signing_secret });
assert.equal(event.type, 'event');
assert.equal(event.id, d.headers['webhook-id']);
assert.equal(event.data.type, 'memory_store.created');
assert.equal(event.data.id, store.id);

// A changed body, or another key, is refused.
assert.throws(() => client.beta.webhooks.unwrap(d.body.replace(store.id, 'memstore_other'), { headers: d.headers, key: hook.signing_secret }));
const other = await client.beta.organization.webhooks.regenerateSigningSecret(hook.id);
assert.throws(() => client.beta.webhooks.unwrap(d.body, { headers: d.headers, key: other.signing_secret }));

await client.beta.organization.webhooks.delete(hook.id);
console.log('ok: unwrap verified the delivery of', event.data.type);
