'use strict';
// ioredis scenarios against a running goblin-core.
// Usage: node tests/clients/node/ioredis_test.js PORT [DB]
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const Redis = require('ioredis');
const { Runner, eq, check, rejects, sleep, until } = require('./harness');

const PORT = Number(process.argv[2] || (workerData && workerData.port));
const DB = Number(process.argv[3] || (workerData && workerData.db) || 8);

function connect(ctx, extra = {}) {
  const r = new Redis({
    host: '127.0.0.1',
    port: PORT,
    db: DB,
    connectTimeout: 5000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null, // no reconnects: a dropped connection is a failure
    ...extra,
  });
  r.on('error', (e) => { r.lastError = e; });
  if (ctx) ctx.clients.push(r);
  return r;
}

async function clean(r, prefix) {
  const keys = [];
  for await (const batch of r.scanStream({ match: `${prefix}*`, count: 1000 })) keys.push(...batch);
  if (keys.length) await r.del(...keys);
}

// ------------------------------------------------- worker thread body
if (!isMainThread) {
  (async () => {
    const r = connect(null);
    for (let i = 0; i < 150; i++) {
      await r.incr('io:pool:ctr');
      if (i % 50 === 0) await r.rpush('io:pool:list', `${workerData.n}:${i}`);
    }
    await r.quit();
    parentPort.postMessage('done');
  })().catch((e) => parentPort.postMessage(`error: ${e.message}`));
  return;
}

const t = new Runner('ioredis');

t.scenario('strings', async (ctx) => {
  const r = connect(ctx);
  await clean(r, 'io:str:');
  eq(await r.set('io:str:a', 'hello'), 'OK', 'SET');
  eq(await r.get('io:str:a'), 'hello', 'GET');
  eq(await r.get('io:str:missing'), null, 'GET missing');
  eq(await r.set('io:str:a', 'x', 'NX'), null, 'SET NX on existing');
  eq(await r.set('io:str:b', 'x', 'XX'), null, 'SET XX on missing');
  eq(await r.set('io:str:a', 'old', 'GET'), 'hello', 'SET GET');
  eq(await r.append('io:str:a', 'er'), 5, 'APPEND');
  eq(await r.strlen('io:str:a'), 5, 'STRLEN');
  eq(await r.getrange('io:str:a', 1, 3), 'lde', 'GETRANGE');
  eq(await r.setrange('io:str:a', 0, 'C'), 5, 'SETRANGE');
  eq(await r.get('io:str:a'), 'Clder', 'GET after SETRANGE');
  eq(await r.mset({ 'io:str:m1': '1', 'io:str:m2': '2' }), 'OK', 'MSET object');
  eq(await r.mget('io:str:m1', 'io:str:missing', 'io:str:m2'), ['1', null, '2'], 'MGET');
  eq(await r.incr('io:str:n'), 1, 'INCR');
  eq(await r.incrby('io:str:n', 41), 42, 'INCRBY');
  eq(await r.decr('io:str:n'), 41, 'DECR');
  eq(await r.incrbyfloat('io:str:n', 0.5), '41.5', 'INCRBYFLOAT');
  const e = await rejects(r.incr('io:str:a'), 'INCR on text');
  eq(e.message, 'ERR value is not an integer or out of range', 'INCR error');
  eq(await r.setex('io:str:ttl', 100, 'v'), 'OK', 'SETEX');
  const ttl = await r.ttl('io:str:ttl');
  check(ttl >= 95 && ttl <= 100, `TTL ${ttl}`);
  eq(await r.set('io:str:px', 'v', 'PX', 50000), 'OK', 'SET PX');
  eq(await r.getex('io:str:px', 'PERSIST'), 'v', 'GETEX PERSIST');
  eq(await r.ttl('io:str:px'), -1, 'TTL after PERSIST');
  eq(await r.getdel('io:str:px'), 'v', 'GETDEL');
  eq(await r.getset('io:str:m1', 'one'), '1', 'GETSET');
  const blob = Buffer.from(Array.from({ length: 1024 }, (_, i) => i % 256));
  await r.set(Buffer.from('io:str:bin\x00key'), blob);
  eq(Buffer.compare(await r.getBuffer(Buffer.from('io:str:bin\x00key')), blob), 0, 'binary-safe key and value');
  eq(await r.del('io:str:a', 'io:str:m1', 'io:str:nothing'), 2, 'DEL count');
  eq(await r.type('io:str:m2'), 'string', 'TYPE');
});

t.scenario('hashes', async (ctx) => {
  const r = connect(ctx);
  await clean(r, 'io:hash:');
  const k = 'io:hash:h';
  eq(await r.hset(k, { a: '1', b: '2', c: '3' }), 3, 'HSET object');
  eq(await r.hset(k, 'a', '10'), 0, 'HSET existing field');
  eq(await r.hget(k, 'a'), '10', 'HGET');
  eq(await r.hget(k, 'zz'), null, 'HGET missing field');
  eq(await r.hgetall(k), { a: '10', b: '2', c: '3' }, 'HGETALL');
  eq(await r.hmget(k, 'a', 'zz', 'c'), ['10', null, '3'], 'HMGET');
  eq(await r.hlen(k), 3, 'HLEN');
  eq((await r.hkeys(k)).sort(), ['a', 'b', 'c'], 'HKEYS');
  eq((await r.hvals(k)).sort(), ['10', '2', '3'], 'HVALS');
  eq(await r.hexists(k, 'b'), 1, 'HEXISTS');
  eq(await r.hincrby(k, 'b', 5), 7, 'HINCRBY');
  eq(await r.hincrbyfloat(k, 'c', 1.25), '4.25', 'HINCRBYFLOAT');
  eq(await r.hsetnx(k, 'a', 'x'), 0, 'HSETNX existing');
  eq(await r.hsetnx(k, 'd', 'x'), 1, 'HSETNX new');
  eq(await r.hstrlen(k, 'd'), 1, 'HSTRLEN');
  eq(await r.hdel(k, 'a', 'zz'), 1, 'HDEL');
  eq(await r.type(k), 'hash', 'TYPE');
  const big = {};
  for (let i = 0; i < 1000; i++) big[`f${i}`] = String(i);
  await r.hset('io:hash:big', big);
  eq(await r.hgetall('io:hash:big'), big, 'HGETALL of 1000 fields');
  const scanned = {};
  for await (const batch of r.hscanStream('io:hash:big', { count: 100 })) {
    for (let i = 0; i < batch.length; i += 2) scanned[batch[i]] = batch[i + 1];
  }
  eq(scanned, big, 'hscanStream');
  await r.set('io:hash:str', 'x');
  const e = await rejects(r.hget('io:hash:str', 'f'), 'HGET on a string');
  check(e.message.startsWith('WRONGTYPE'), `WRONGTYPE error: ${e.message}`);
});

t.scenario('zsets', async (ctx) => {
  const r = connect(ctx);
  await clean(r, 'io:zset:');
  const k = 'io:zset:z';
  eq(await r.zadd(k, 1, 'a', 2, 'b', 3.5, 'c'), 3, 'ZADD');
  eq(await r.zadd(k, 'NX', 5, 'a'), 0, 'ZADD NX');
  eq(await r.zadd(k, 'XX', 'CH', 0.5, 'a'), 1, 'ZADD XX CH');
  eq(await r.zadd(k, 'GT', 0.1, 'a'), 0, 'ZADD GT lower');
  eq(await r.zscore(k, 'a'), '0.5', 'ZSCORE');
  eq(await r.zincrby(k, 2, 'a'), '2.5', 'ZINCRBY');
  eq(await r.zrange(k, 0, -1, 'WITHSCORES'), ['b', '2', 'a', '2.5', 'c', '3.5'], 'ZRANGE WITHSCORES');
  eq(await r.zrevrange(k, 0, 0), ['c'], 'ZREVRANGE');
  eq(await r.zrangebyscore(k, 2, '+inf', 'LIMIT', 1, 5), ['a', 'c'], 'ZRANGEBYSCORE LIMIT');
  eq(await r.zrank(k, 'c'), 2, 'ZRANK');
  eq(await r.zrevrank(k, 'c'), 0, 'ZREVRANK');
  eq(await r.zcount(k, '(2', 4), 2, 'ZCOUNT');
  eq(await r.zcard(k), 3, 'ZCARD');
  eq(await r.zmscore(k, 'a', 'nope'), ['2.5', null], 'ZMSCORE');
  eq(await r.zrem(k, 'b', 'nope'), 1, 'ZREM');
  await r.zadd('io:zset:o', 10, 'a', 1, 'x');
  eq(await r.zunionstore('io:zset:u', 2, k, 'io:zset:o'), 3, 'ZUNIONSTORE');
  eq(await r.zrange('io:zset:u', 0, -1, 'WITHSCORES'), ['x', '1', 'c', '3.5', 'a', '12.5'], 'union result');
  eq(await r.zinterstore('io:zset:i', 2, k, 'io:zset:o', 'WEIGHTS', 1, 2), 1, 'ZINTERSTORE WEIGHTS');
  eq(await r.zscore('io:zset:i', 'a'), '22.5', 'weighted intersection score');
  eq(await r.zpopmin(k), ['a', '2.5'], 'ZPOPMIN');
  eq(await r.zpopmax('io:zset:u', 2), ['a', '12.5', 'c', '3.5'], 'ZPOPMAX count');
  await r.zadd('io:zset:lex', 0, 'a', 0, 'b', 0, 'c', 0, 'd', 0, 'e');
  eq(await r.zrangebylex('io:zset:lex', '[b', '(e'), ['b', 'c', 'd'], 'ZRANGEBYLEX');
  const args = [];
  const members = {};
  for (let i = 0; i < 600; i++) { args.push(i, `m${i}`); members[`m${i}`] = String(i); }
  await r.zadd('io:zset:big', ...args);
  const scanned = {};
  for await (const batch of r.zscanStream('io:zset:big', { count: 50 })) {
    for (let i = 0; i < batch.length; i += 2) scanned[batch[i]] = batch[i + 1];
  }
  eq(scanned, members, 'zscanStream');
});

t.scenario('lists', async (ctx) => {
  const r = connect(ctx);
  await clean(r, 'io:list:');
  const k = 'io:list:l';
  eq(await r.rpush(k, 'a', 'b', 'c'), 3, 'RPUSH');
  eq(await r.lpush(k, 'z'), 4, 'LPUSH');
  eq(await r.lrange(k, 0, -1), ['z', 'a', 'b', 'c'], 'LRANGE');
  eq(await r.llen(k), 4, 'LLEN');
  eq(await r.lindex(k, -1), 'c', 'LINDEX');
  eq(await r.lset(k, 1, 'A'), 'OK', 'LSET');
  eq(await r.linsert(k, 'BEFORE', 'b', 'ins'), 5, 'LINSERT');
  eq(await r.lpos(k, 'b'), 3, 'LPOS');
  eq(await r.lrem(k, 0, 'ins'), 1, 'LREM');
  eq(await r.lpop(k), 'z', 'LPOP');
  eq(await r.rpop(k, 2), ['c', 'b'], 'RPOP count');
  await r.rpush(k, ...Array.from({ length: 100 }, (_, i) => String(i)));
  eq(await r.ltrim(k, 0, 9), 'OK', 'LTRIM');
  eq(await r.llen(k), 10, 'LLEN after LTRIM');
  eq(await r.lmove(k, 'io:list:dst', 'LEFT', 'RIGHT'), 'A', 'LMOVE');
  eq(await r.rpoplpush(k, 'io:list:dst'), '8', 'RPOPLPUSH');
  eq(await r.lrange('io:list:dst', 0, -1), ['8', 'A'], 'destination list');
  eq(await r.lpushx('io:list:nope', 'x'), 0, 'LPUSHX on missing');
  eq(await r.type(k), 'list', 'TYPE');
});

t.scenario('sets', async (ctx) => {
  const r = connect(ctx);
  await clean(r, 'io:set:');
  eq(await r.sadd('io:set:a', 'x', 'y', 'z', 'x'), 3, 'SADD');
  await r.sadd('io:set:b', 'y', 'z', 'w');
  eq((await r.smembers('io:set:a')).sort(), ['x', 'y', 'z'], 'SMEMBERS');
  eq(await r.sismember('io:set:a', 'x'), 1, 'SISMEMBER');
  eq(await r.smismember('io:set:a', 'x', 'q'), [1, 0], 'SMISMEMBER');
  eq(await r.scard('io:set:a'), 3, 'SCARD');
  eq((await r.sinter('io:set:a', 'io:set:b')).sort(), ['y', 'z'], 'SINTER');
  eq((await r.sunion('io:set:a', 'io:set:b')).sort(), ['w', 'x', 'y', 'z'], 'SUNION');
  eq(await r.sdiff('io:set:a', 'io:set:b'), ['x'], 'SDIFF');
  eq(await r.sinterstore('io:set:i', 'io:set:a', 'io:set:b'), 2, 'SINTERSTORE');
  eq(await r.smove('io:set:a', 'io:set:b', 'x'), 1, 'SMOVE');
  eq(await r.srem('io:set:b', 'x', 'nope'), 1, 'SREM');
  const popped = await r.spop('io:set:b');
  check(['y', 'z', 'w'].includes(popped), `SPOP returned ${popped}`);
  check(['y', 'z'].includes(await r.srandmember('io:set:a')), 'SRANDMEMBER');
  const members = Array.from({ length: 700 }, (_, i) => `m${i}`);
  await r.sadd('io:set:big', ...members);
  const scanned = new Set();
  for await (const batch of r.sscanStream('io:set:big', { count: 50 })) batch.forEach((m) => scanned.add(m));
  eq([...scanned].sort(), members.slice().sort(), 'sscanStream');
  eq(await r.type('io:set:big'), 'set', 'TYPE');
});

t.scenario('pipeline-no-transaction', async (ctx) => {
  const r = connect(ctx);
  await clean(r, 'io:pipe:');
  const p = r.pipeline();
  for (let i = 0; i < 200; i++) p.set(`io:pipe:${i}`, i);
  for (let i = 0; i < 200; i++) p.incr(`io:pipe:${i}`);
  p.get('io:pipe:199');
  const res = await p.exec();
  eq(res.length, 401, 'number of replies');
  check(res.every(([err]) => err === null), `an error in the pipeline: ${res.find(([err]) => err)}`);
  eq(res.slice(200, 400).map(([, v]) => v), Array.from({ length: 200 }, (_, i) => i + 1), 'INCR replies');
  eq(res[400][1], '200', 'last GET');
  // An error reply is returned in place; the rest still run.
  const res2 = await r.pipeline().set('io:pipe:s', 'x').lpush('io:pipe:s', 'y').get('io:pipe:s').exec();
  eq(res2[0], [null, 'OK'], 'SET in pipeline');
  check(res2[1][0] && res2[1][0].message.startsWith('WRONGTYPE'), `WRONGTYPE in place, got ${res2[1]}`);
  eq(res2[2], [null, 'x'], 'command after the error');
});

t.scenario('pipeline-transaction', async (ctx) => {
  const r = connect(ctx);
  await clean(r, 'io:multi:');
  const res = await r.multi().set('io:multi:a', 1).incr('io:multi:a').incrby('io:multi:a', 10).get('io:multi:a').exec();
  eq(res, [[null, 'OK'], [null, 2], [null, 12], [null, '12']], 'MULTI/EXEC replies');
  const res2 = await r.multi().set('io:multi:s', 'x').lpush('io:multi:s', 'y').set('io:multi:t', 'after').exec();
  check(res2[1][0] && res2[1][0].message.startsWith('WRONGTYPE'), `WRONGTYPE inside EXEC, got ${res2[1]}`);
  eq(await r.get('io:multi:t'), 'after', 'commands after the failing one ran');
  const e = await rejects(r.multi().set('io:multi:u', 'never').call('INCRBY', 'io:multi:u').exec(), 'EXEC after a queueing error');
  check(e.message.startsWith('EXECABORT'), `EXECABORT, got ${e.message}`);
  eq(await r.exists('io:multi:u'), 0, 'EXECABORT discarded the transaction');
});

t.scenario('watch-optimistic-locking', async (ctx) => {
  const r = connect(ctx);
  const other = connect(ctx);
  const k = 'io:watch:balance';
  await r.set(k, 100);
  // Retry loop: the first attempt is spoiled by a concurrent client.
  let attempts = 0;
  for (;;) {
    attempts++;
    await r.watch(k);
    const bal = Number(await r.get(k));
    if (attempts === 1) await other.incrby(k, 5);
    const res = await r.multi().set(k, bal * 2).exec();
    if (res !== null) break; // null: EXEC aborted by WATCH
    check(attempts < 5, 'transaction never committed');
  }
  eq(attempts, 2, 'transaction attempts (first must be aborted)');
  eq(await r.get(k), '210', 'value after the retried transaction');
  await r.watch(k);
  await other.set(k, 1);
  eq(await r.multi().set(k, 999).exec(), null, 'EXEC after the watched key changed');
  eq(await r.get(k), '1', 'aborted transaction wrote nothing');
  // Contention: 4 connections x 25 optimistic increments.
  await r.set('io:watch:ctr', 0);
  let retries = 0;
  await Promise.all([0, 1, 2, 3].map(async () => {
    const c = connect(ctx);
    for (let i = 0; i < 25; i++) {
      for (;;) {
        await c.watch('io:watch:ctr');
        const v = Number(await c.get('io:watch:ctr'));
        if (await c.multi().set('io:watch:ctr', v + 1).exec()) break;
        retries++;
      }
    }
  }));
  eq(await r.get('io:watch:ctr'), '100', `counter after contended transactions (${retries} retries)`);
}, 40000);

t.scenario('pubsub-events', async (ctx) => {
  const sub = connect(ctx);
  const pub = connect(ctx);
  const got = [];
  sub.on('message', (channel, message) => got.push(['message', channel, message]));
  sub.on('pmessage', (pattern, channel, message) => got.push(['pmessage', pattern, channel, message]));
  eq(await sub.subscribe('io:chan:news'), 1, 'SUBSCRIBE count');
  eq(await sub.psubscribe('io:pat:*'), 2, 'PSUBSCRIBE count');
  eq(await pub.publish('io:chan:news', 'hello'), 1, 'PUBLISH to a channel');
  eq(await pub.publish('io:pat:one', 'world'), 1, 'PUBLISH matching a pattern');
  eq(await pub.publish('io:chan:other', 'nobody'), 0, 'PUBLISH with no subscriber');
  await pub.publish('io:chan:news', 'bye');
  await until(() => got.length >= 3, 'three messages');
  eq(got, [
    ['message', 'io:chan:news', 'hello'],
    ['pmessage', 'io:pat:*', 'io:pat:one', 'world'],
    ['message', 'io:chan:news', 'bye'],
  ], 'messages in order');
  eq(await sub.unsubscribe('io:chan:news'), 1, 'UNSUBSCRIBE count');
  eq(await sub.punsubscribe(), 0, 'PUNSUBSCRIBE count');
  eq(await pub.publish('io:chan:news', 'late'), 0, 'PUBLISH after unsubscribe');
  eq(await sub.ping(), 'PONG', 'back to normal mode');
});

t.scenario('pubsub-introspection', async (ctx) => {
  const sub = connect(ctx);
  const pub = connect(ctx);
  const bufs = [];
  sub.on('messageBuffer', (channel, message) => bufs.push(message));
  await sub.subscribe('io:intro:a', 'io:intro:b');
  await sub.psubscribe('io:intro:*');
  eq(await pub.pubsub('NUMSUB', 'io:intro:a', 'io:intro:zz'), ['io:intro:a', 1, 'io:intro:zz', 0], 'PUBSUB NUMSUB');
  eq((await pub.pubsub('CHANNELS', 'io:intro:*')).sort(), ['io:intro:a', 'io:intro:b'], 'PUBSUB CHANNELS');
  check((await pub.pubsub('NUMPAT')) >= 1, 'PUBSUB NUMPAT');
  const payload = Buffer.from([0, 1, 2, 255, 13, 10]);
  eq(await pub.publish('io:intro:b', payload), 2, 'PUBLISH reaches channel and pattern');
  await until(() => bufs.length >= 1, 'binary message');
  eq(Buffer.compare(bufs[0], payload), 0, 'binary payload intact');
});

t.scenario('blocking-pops', async (ctx) => {
  const r = connect(ctx);
  const other = connect(ctx);
  await clean(r, 'io:block:');
  let t0 = Date.now();
  eq(await r.blpop('io:block:empty', 1), null, 'BLPOP timeout on empty list');
  let el = Date.now() - t0;
  check(el >= 900 && el < 3000, `BLPOP timeout 1 s took ${el} ms`);
  await r.rpush('io:block:b', 'x', 'y');
  eq(await r.blpop('io:block:a', 'io:block:b', 1), ['io:block:b', 'x'], 'BLPOP on ready key');
  eq(await r.brpop('io:block:b', 1), ['io:block:b', 'y'], 'BRPOP');
  t0 = Date.now();
  const waiting = r.blpop('io:block:late', 5);
  await sleep(300);
  eq(await other.rpush('io:block:late', 'arrived'), 1, 'RPUSH');
  eq(await waiting, ['io:block:late', 'arrived'], 'BLPOP woken by a push');
  el = Date.now() - t0;
  check(el >= 250 && el < 3000, `BLPOP woke after ${el} ms`);
  t0 = Date.now();
  eq(await r.brpop('io:block:empty', 0.2), null, 'BRPOP fractional timeout');
  check(Date.now() - t0 < 1500, 'fractional BRPOP timeout');
  eq(await r.blmove('io:block:empty', 'io:block:dst', 'LEFT', 'RIGHT', 0.2), null, 'BLMOVE timeout');
  await r.rpush('io:block:src', 'm');
  eq(await r.brpoplpush('io:block:src', 'io:block:dst', 1), 'm', 'BRPOPLPUSH');
  eq(await r.bzpopmin('io:block:zempty', 0.2), null, 'BZPOPMIN timeout');
  const zwait = r.bzpopmin('io:block:z', 5);
  await sleep(200);
  await other.zadd('io:block:z', 1, 'low', 2, 'high');
  eq(await zwait, ['io:block:z', 'low', '1'], 'BZPOPMIN woken by ZADD');
  eq(await r.bzpopmax('io:block:z', 1), ['io:block:z', 'high', '2'], 'BZPOPMAX');
});

t.scenario('scan-stream', async (ctx) => {
  const r = connect(ctx);
  await clean(r, 'io:scan:');
  const p = r.pipeline();
  for (let i = 0; i < 1500; i++) p.set(`io:scan:k:${i}`, i);
  for (let i = 0; i < 100; i++) p.hset(`io:scan:h:${i}`, 'f', i);
  await p.exec();
  const got = new Set();
  for await (const batch of r.scanStream({ match: 'io:scan:k:*', count: 100 })) batch.forEach((k) => got.add(k));
  eq(got.size, 1500, 'scanStream match count');
  check([...got].every((k) => /^io:scan:k:\d+$/.test(k)), 'only matching keys');
  const hashes = new Set();
  for await (const batch of r.scanStream({ match: 'io:scan:*', type: 'hash', count: 100 })) batch.forEach((k) => hashes.add(k));
  eq(hashes.size, 100, 'scanStream type=hash');
});

t.scenario('worker-threads', async (ctx) => {
  const r = connect(ctx);
  await r.del('io:pool:ctr', 'io:pool:list');
  const results = await Promise.all([0, 1, 2, 3, 4, 5].map((n) => new Promise((resolve, reject) => {
    const w = new Worker(__filename, { workerData: { port: PORT, db: DB, n } });
    w.once('message', resolve);
    w.once('error', reject);
  })));
  eq(results, Array(6).fill('done'), 'worker results');
  eq(await r.get('io:pool:ctr'), String(6 * 150), 'counter after 6 worker threads');
  eq(await r.llen('io:pool:list'), 18, 'list length');
});

t.scenario('auto-pipelining', async (ctx) => {
  const r = connect(ctx, { enableAutoPipelining: true });
  await r.ping();
  await clean(r, 'io:auto:');
  const before = await r.info('stats');
  const cmds = (s) => Number(/total_commands_processed:(\d+)/.exec(s)[1]);
  // Commands issued in one tick are sent as one pipeline.
  const sets = [];
  for (let i = 0; i < 1000; i++) sets.push(r.set(`io:auto:${i}`, `v${i}`));
  check(r.autoPipelineQueueSize > 0, `nothing queued for auto-pipelining (queue ${r.autoPipelineQueueSize})`);
  eq(await Promise.all(sets), Array(1000).fill('OK'), 'auto-pipelined SET replies');
  const gets = [];
  for (let i = 0; i < 1000; i++) gets.push(r.get(`io:auto:${i}`));
  const vals = await Promise.all(gets);
  eq(vals, Array.from({ length: 1000 }, (_, i) => `v${i}`), 'auto-pipelined GET replies in order');
  const n = cmds(await r.info('stats')) - cmds(before);
  check(n >= 2000, `server counted ${n} commands for 2000 auto-pipelined ones`);
  // Mixed with a MULTI on the same connection.
  const [a, b] = await Promise.all([r.multi().incr('io:auto:n').incr('io:auto:n').exec(), r.get('io:auto:5')]);
  eq(a, [[null, 1], [null, 2]], 'MULTI next to auto-pipelined commands');
  eq(b, 'v5', 'GET next to MULTI');
});

t.scenario('client-tracking-redirect', async (ctx) => {
  // ioredis 5.9.2 speaks RESP2 only and has no client-side cache API, so the
  // RESP2 form of tracking is exercised: invalidations redirected to a
  // connection subscribed to __redis__:invalidate.
  console.log('note: ioredis 5.9.2 has no client-side cache API (RESP2 only): '
    + 'CLIENT TRACKING with REDIRECT to a __redis__:invalidate subscriber is exercised instead');
  const sub = connect(ctx);
  const tracker = connect(ctx);
  const writer = connect(ctx);
  const subId = await sub.client('ID');
  const got = [];
  sub.on('message', (channel, message) => got.push([channel, message]));
  eq(await sub.subscribe('__redis__:invalidate'), 1, 'SUBSCRIBE __redis__:invalidate');
  eq(await tracker.client('TRACKING', 'ON', 'REDIRECT', subId), 'OK', 'CLIENT TRACKING ON REDIRECT');
  eq(await tracker.client('GETREDIR'), subId, 'CLIENT GETREDIR');
  eq(await tracker.client('TRACKINGINFO'), ['flags', ['on'], 'redirect', subId, 'prefixes', []], 'CLIENT TRACKINGINFO');
  await writer.set('io:csc:k', '1');
  eq(await tracker.get('io:csc:k'), '1', 'tracked GET');
  await writer.set('io:csc:k', '2');
  await until(() => got.length >= 1, 'an invalidation message');
  // ioredis hands the message payload (an array of keys) over as it parsed it.
  eq(got[0][0], '__redis__:invalidate', 'invalidation channel');
  eq(String(got[0][1]), 'io:csc:k', 'invalidated key');
  eq(await tracker.client('TRACKING', 'OFF'), 'OK', 'CLIENT TRACKING OFF');
  eq(await tracker.client('GETREDIR'), -1, 'GETREDIR after OFF');
});

(async () => {
  let failed;
  try {
    const probe = connect(null);
    await probe.ping();
    probe.disconnect();
  } catch (e) {
    for (const s of t.scenarios) console.log(`failed: ioredis/${s.name}: cannot connect: ${e.message}`);
    process.exit(1);
  }
  failed = await t.run(() => ({ clients: [] }), async (ctx) => {
    for (const c of ctx.clients) c.disconnect();
  });
  process.exit(failed ? 1 : 0);
})();
