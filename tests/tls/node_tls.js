'use strict';
// node-redis 4.7.1 and ioredis 5.9.2 over TLS (client certificate), run by
// tests/tls/test_tls.py with NODE_PATH at tests/clients/node/node_modules.
//   node tests/tls/node_tls.js PORT CA CERT KEY
// Prints one JSON line of what each client saw.
const fs = require('node:fs');
const { createClient } = require('redis');
const Redis = require('ioredis');

const [port, caPath, certPath, keyPath] = process.argv.slice(2);
const tls = {
  ca: fs.readFileSync(caPath),
  cert: fs.readFileSync(certPath),
  key: fs.readFileSync(keyPath),
  servername: 'localhost',
};

async function nodeRedis() {
  const c = createClient({
    socket: { host: '127.0.0.1', port: Number(port), tls: true, ...tls, reconnectStrategy: false },
  });
  c.on('error', () => {});
  await c.connect();
  const out = [];
  out.push(await c.ping());
  out.push(await c.set('nr:k', 'v'));
  out.push(await c.get('nr:k'));
  const big = 'x'.repeat(2 * 1024 * 1024);
  await c.set('nr:big', big);
  out.push((await c.get('nr:big')) === big);
  const many = await Promise.all(Array.from({ length: 500 }, (_, i) => c.incr('nr:n')));
  out.push(many[many.length - 1]);
  out.push(await c.multi().incr('nr:m').incr('nr:m').exec());
  await c.quit();
  return out;
}

async function ioredis() {
  const r = new Redis({ host: '127.0.0.1', port: Number(port), tls, lazyConnect: true, maxRetriesPerRequest: 0 });
  r.on('error', () => {});
  await r.connect();
  const out = [];
  out.push(await r.ping());
  out.push(await r.set('io:k', 'v'));
  out.push(await r.get('io:k'));
  const p = r.pipeline();
  for (let i = 0; i < 1000; i++) p.rpush('io:l', String(i));
  const res = await p.exec();
  out.push(res[999][1]);
  out.push((await r.lrange('io:l', 0, 2)));
  const big = Buffer.alloc(3 * 1024 * 1024, 7);
  await r.set('io:big', big);
  out.push(Buffer.compare(await r.getBuffer('io:big'), big) === 0);
  await r.quit();
  return out;
}

(async () => {
  const result = {};
  for (const [name, fn] of [['node-redis', nodeRedis], ['ioredis', ioredis]]) {
    try {
      result[name] = await fn();
    } catch (e) {
      result[name] = 'error: ' + e.message;
    }
  }
  console.log(JSON.stringify(result));
  process.exit(0);
})();
