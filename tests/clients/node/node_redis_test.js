'use strict';
// node-redis v4 ("redis" on npm) scenarios against a running goblin-core.
// Usage: node tests/clients/node/node_redis_test.js PORT [DB]
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const { createClient, commandOptions, WatchError } = require('redis');
const { Runner, eq, check, rejects, sleep, until } = require('./harness');

const PORT = Number(process.argv[2] || (workerData && workerData.port));
const DB = Number(process.argv[3] || (workerData && workerData.db) || 9);

async function connect(ctx, extra = {}) {
  const c = createClient({
    socket: { host: '127.0.0.1', port: PORT, connectTimeout: 5000, reconnectStrategy: false },
    database: DB,
    ...extra,
  });
  c.on('error', (e) => { c.lastError = e; });
  if (ctx) ctx.clients.push(c);
  await c.connect();
  return c;
}

const plain = (o) => ({ ...o }); // node-redis returns null-prototype objects

async function clean(r, prefix) {
  const keys = [];
  for await (const k of r.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) keys.push(k);
  if (keys.length) await r.del(keys);
}

// ------------------------------------------------- worker thread body
if (!isMainThread) {
  (async () => {
    const r = await connect(null);
    for (let i = 0; i < 150; i++) {
      await r.incr('nr:pool:ctr');
      if (i % 50 === 0) await r.rPush('nr:pool:list', `${workerData.n}:${i}`);
    }
    await r.quit();
    parentPort.postMessage('done');
  })().catch((e) => parentPort.postMessage(`error: ${e.message}`));
  return;
}

const t = new Runner('node-redis');

t.scenario('strings', async (ctx) => {
  const r = await connect(ctx);
  await clean(r, 'nr:str:');
  eq(await r.set('nr:str:a', 'hello'), 'OK', 'SET');
  eq(await r.get('nr:str:a'), 'hello', 'GET');
  eq(await r.get('nr:str:missing'), null, 'GET missing');
  eq(await r.set('nr:str:a', 'x', { NX: true }), null, 'SET NX on existing');
  eq(await r.set('nr:str:b', 'x', { XX: true }), null, 'SET XX on missing');
  eq(await r.set('nr:str:a', 'old', { GET: true }), 'hello', 'SET GET');
  eq(await r.append('nr:str:a', 'er'), 5, 'APPEND');
  eq(await r.strLen('nr:str:a'), 5, 'STRLEN');
  eq(await r.getRange('nr:str:a', 1, 3), 'lde', 'GETRANGE');
  eq(await r.setRange('nr:str:a', 0, 'C'), 5, 'SETRANGE');
  eq(await r.get('nr:str:a'), 'Clder', 'GET after SETRANGE');
  eq(await r.mSet({ 'nr:str:m1': '1', 'nr:str:m2': '2' }), 'OK', 'MSET');
  eq(await r.mGet(['nr:str:m1', 'nr:str:missing', 'nr:str:m2']), ['1', null, '2'], 'MGET');
  eq(await r.incr('nr:str:n'), 1, 'INCR');
  eq(await r.incrBy('nr:str:n', 41), 42, 'INCRBY');
  eq(await r.decr('nr:str:n'), 41, 'DECR');
  eq(await r.incrByFloat('nr:str:n', 0.5), '41.5', 'INCRBYFLOAT');
  const e = await rejects(r.incr('nr:str:a'), 'INCR on text');
  eq(e.message, 'ERR value is not an integer or out of range', 'INCR error');
  eq(await r.setEx('nr:str:ttl', 100, 'v'), 'OK', 'SETEX');
  const ttl = await r.ttl('nr:str:ttl');
  check(ttl >= 95 && ttl <= 100, `TTL ${ttl}`);
  eq(await r.set('nr:str:px', 'v', { PX: 50000 }), 'OK', 'SET PX');
  eq(await r.getEx('nr:str:px', { PERSIST: true }), 'v', 'GETEX PERSIST');
  eq(await r.ttl('nr:str:px'), -1, 'TTL after PERSIST');
  eq(await r.getDel('nr:str:px'), 'v', 'GETDEL');
  eq(await r.getSet('nr:str:m1', 'one'), '1', 'GETSET');
  const blob = Buffer.from(Array.from({ length: 1024 }, (_, i) => i % 256));
  const bkey = Buffer.from('nr:str:bin\x00key');
  await r.set(bkey, blob);
  eq(Buffer.compare(await r.get(commandOptions({ returnBuffers: true }), bkey), blob), 0, 'binary-safe key and value');
  eq(await r.del(['nr:str:a', 'nr:str:m1', 'nr:str:nothing']), 2, 'DEL count');
  eq(await r.type('nr:str:m2'), 'string', 'TYPE');
});

t.scenario('hashes', async (ctx) => {
  const r = await connect(ctx);
  await clean(r, 'nr:hash:');
  const k = 'nr:hash:h';
  eq(await r.hSet(k, { a: '1', b: '2', c: '3' }), 3, 'HSET object');
  eq(await r.hSet(k, 'a', '10'), 0, 'HSET existing field');
  eq(await r.hGet(k, 'a'), '10', 'HGET');
  eq(await r.hGet(k, 'zz'), null, 'HGET missing field');
  eq(plain(await r.hGetAll(k)), { a: '10', b: '2', c: '3' }, 'HGETALL');
  eq(await r.hmGet(k, ['a', 'zz', 'c']), ['10', null, '3'], 'HMGET');
  eq(await r.hLen(k), 3, 'HLEN');
  eq((await r.hKeys(k)).sort(), ['a', 'b', 'c'], 'HKEYS');
  eq((await r.hVals(k)).sort(), ['10', '2', '3'], 'HVALS');
  eq(await r.hExists(k, 'b'), true, 'HEXISTS');
  eq(await r.hIncrBy(k, 'b', 5), 7, 'HINCRBY');
  eq(await r.hIncrByFloat(k, 'c', 1.25), '4.25', 'HINCRBYFLOAT');
  eq(await r.hSetNX(k, 'a', 'x'), false, 'HSETNX existing');
  eq(await r.hSetNX(k, 'd', 'x'), true, 'HSETNX new');
  eq(await r.hStrLen(k, 'd'), 1, 'HSTRLEN');
  eq(await r.hDel(k, ['a', 'zz']), 1, 'HDEL');
  eq(await r.type(k), 'hash', 'TYPE');
  const big = {};
  for (let i = 0; i < 1000; i++) big[`f${i}`] = String(i);
  await r.hSet('nr:hash:big', big);
  eq(plain(await r.hGetAll('nr:hash:big')), big, 'HGETALL of 1000 fields');
  const scanned = {};
  for await (const { field, value } of r.hScanIterator('nr:hash:big', { COUNT: 100 })) scanned[field] = value;
  eq(scanned, big, 'hScanIterator');
  await r.set('nr:hash:str', 'x');
  const e = await rejects(r.hGet('nr:hash:str', 'f'), 'HGET on a string');
  check(e.message.startsWith('WRONGTYPE'), `WRONGTYPE error: ${e.message}`);
});

t.scenario('zsets', async (ctx) => {
  const r = await connect(ctx);
  await clean(r, 'nr:zset:');
  const k = 'nr:zset:z';
  eq(await r.zAdd(k, [{ score: 1, value: 'a' }, { score: 2, value: 'b' }, { score: 3.5, value: 'c' }]), 3, 'ZADD');
  eq(await r.zAdd(k, { score: 5, value: 'a' }, { NX: true }), 0, 'ZADD NX');
  eq(await r.zAdd(k, { score: 0.5, value: 'a' }, { XX: true, CH: true }), 1, 'ZADD XX CH');
  eq(await r.zAdd(k, { score: 0.1, value: 'a' }, { GT: true }), 0, 'ZADD GT lower');
  eq(await r.zScore(k, 'a'), 0.5, 'ZSCORE');
  eq(await r.zIncrBy(k, 2, 'a'), 2.5, 'ZINCRBY');
  eq(await r.zRangeWithScores(k, 0, -1), [{ value: 'b', score: 2 }, { value: 'a', score: 2.5 }, { value: 'c', score: 3.5 }], 'ZRANGE WITHSCORES');
  eq(await r.zRange(k, 0, 0, { REV: true }), ['c'], 'ZRANGE REV');
  eq(await r.zRangeByScore(k, 2, '+inf', { LIMIT: { offset: 1, count: 5 } }), ['a', 'c'], 'ZRANGEBYSCORE LIMIT');
  eq(await r.zRank(k, 'c'), 2, 'ZRANK');
  eq(await r.zRevRank(k, 'c'), 0, 'ZREVRANK');
  eq(await r.zCount(k, '(2', 4), 2, 'ZCOUNT');
  eq(await r.zCard(k), 3, 'ZCARD');
  eq(await r.zmScore(k, ['a', 'nope']), [2.5, null], 'ZMSCORE');
  eq(await r.zRem(k, ['b', 'nope']), 1, 'ZREM');
  await r.zAdd('nr:zset:o', [{ score: 10, value: 'a' }, { score: 1, value: 'x' }]);
  eq(await r.zUnionStore('nr:zset:u', [k, 'nr:zset:o']), 3, 'ZUNIONSTORE');
  eq(await r.zRangeWithScores('nr:zset:u', 0, -1), [{ value: 'x', score: 1 }, { value: 'c', score: 3.5 }, { value: 'a', score: 12.5 }], 'union result');
  eq(await r.zInterStore('nr:zset:i', [k, 'nr:zset:o'], { WEIGHTS: [1, 2] }), 1, 'ZINTERSTORE WEIGHTS');
  eq(await r.zScore('nr:zset:i', 'a'), 22.5, 'weighted intersection score');
  eq(await r.zPopMin(k), { value: 'a', score: 2.5 }, 'ZPOPMIN');
  eq(await r.zPopMaxCount('nr:zset:u', 2), [{ value: 'a', score: 12.5 }, { value: 'c', score: 3.5 }], 'ZPOPMAX count');
  await r.zAdd('nr:zset:lex', ['a', 'b', 'c', 'd', 'e'].map((value) => ({ score: 0, value })));
  eq(await r.zRangeByLex('nr:zset:lex', '[b', '(e'), ['b', 'c', 'd'], 'ZRANGEBYLEX');
  const members = {};
  const entries = [];
  for (let i = 0; i < 600; i++) { members[`m${i}`] = i; entries.push({ score: i, value: `m${i}` }); }
  await r.zAdd('nr:zset:big', entries);
  const scanned = {};
  for await (const { value, score } of r.zScanIterator('nr:zset:big', { COUNT: 50 })) scanned[value] = score;
  eq(scanned, members, 'zScanIterator');
});

t.scenario('lists', async (ctx) => {
  const r = await connect(ctx);
  await clean(r, 'nr:list:');
  const k = 'nr:list:l';
  eq(await r.rPush(k, ['a', 'b', 'c']), 3, 'RPUSH');
  eq(await r.lPush(k, 'z'), 4, 'LPUSH');
  eq(await r.lRange(k, 0, -1), ['z', 'a', 'b', 'c'], 'LRANGE');
  eq(await r.lLen(k), 4, 'LLEN');
  eq(await r.lIndex(k, -1), 'c', 'LINDEX');
  eq(await r.lSet(k, 1, 'A'), 'OK', 'LSET');
  eq(await r.lInsert(k, 'BEFORE', 'b', 'ins'), 5, 'LINSERT');
  eq(await r.lPos(k, 'b'), 3, 'LPOS');
  eq(await r.lRem(k, 0, 'ins'), 1, 'LREM');
  eq(await r.lPop(k), 'z', 'LPOP');
  eq(await r.rPopCount(k, 2), ['c', 'b'], 'RPOP count');
  await r.rPush(k, Array.from({ length: 100 }, (_, i) => String(i)));
  eq(await r.lTrim(k, 0, 9), 'OK', 'LTRIM');
  eq(await r.lLen(k), 10, 'LLEN after LTRIM');
  eq(await r.lMove(k, 'nr:list:dst', 'LEFT', 'RIGHT'), 'A', 'LMOVE');
  eq(await r.rPopLPush(k, 'nr:list:dst'), '8', 'RPOPLPUSH');
  eq(await r.lRange('nr:list:dst', 0, -1), ['8', 'A'], 'destination list');
  eq(await r.lPushX('nr:list:nope', 'x'), 0, 'LPUSHX on missing');
  eq(await r.type(k), 'list', 'TYPE');
});

t.scenario('sets', async (ctx) => {
  const r = await connect(ctx);
  await clean(r, 'nr:set:');
  eq(await r.sAdd('nr:set:a', ['x', 'y', 'z', 'x']), 3, 'SADD');
  await r.sAdd('nr:set:b', ['y', 'z', 'w']);
  eq((await r.sMembers('nr:set:a')).sort(), ['x', 'y', 'z'], 'SMEMBERS');
  eq(await r.sIsMember('nr:set:a', 'x'), true, 'SISMEMBER');
  eq(await r.smIsMember('nr:set:a', ['x', 'q']), [true, false], 'SMISMEMBER');
  eq(await r.sCard('nr:set:a'), 3, 'SCARD');
  eq((await r.sInter(['nr:set:a', 'nr:set:b'])).sort(), ['y', 'z'], 'SINTER');
  eq((await r.sUnion(['nr:set:a', 'nr:set:b'])).sort(), ['w', 'x', 'y', 'z'], 'SUNION');
  eq(await r.sDiff(['nr:set:a', 'nr:set:b']), ['x'], 'SDIFF');
  eq(await r.sInterStore('nr:set:i', ['nr:set:a', 'nr:set:b']), 2, 'SINTERSTORE');
  eq(await r.sMove('nr:set:a', 'nr:set:b', 'x'), true, 'SMOVE');
  eq(await r.sRem('nr:set:b', ['x', 'nope']), 1, 'SREM');
  const popped = await r.sPop('nr:set:b');
  check(['y', 'z', 'w'].includes(popped), `SPOP returned ${popped}`);
  check(['y', 'z'].includes(await r.sRandMember('nr:set:a')), 'SRANDMEMBER');
  const members = Array.from({ length: 700 }, (_, i) => `m${i}`);
  await r.sAdd('nr:set:big', members);
  const scanned = new Set();
  for await (const m of r.sScanIterator('nr:set:big', { COUNT: 50 })) scanned.add(m);
  eq([...scanned].sort(), members.slice().sort(), 'sScanIterator');
  eq(await r.type('nr:set:big'), 'set', 'TYPE');
});

t.scenario('pipeline-no-transaction', async (ctx) => {
  const r = await connect(ctx);
  await clean(r, 'nr:pipe:');
  // Commands issued in the same tick are written as one pipeline.
  const sets = [];
  for (let i = 0; i < 200; i++) sets.push(r.set(`nr:pipe:${i}`, String(i)));
  eq(await Promise.all(sets), Array(200).fill('OK'), 'SET replies');
  const incrs = [];
  for (let i = 0; i < 200; i++) incrs.push(r.incr(`nr:pipe:${i}`));
  eq(await Promise.all(incrs), Array.from({ length: 200 }, (_, i) => i + 1), 'INCR replies');
  // Explicit pipeline without MULTI.
  const res = await r.multi().set('nr:pipe:s', 'x').get('nr:pipe:s').incr('nr:pipe:0').execAsPipeline();
  eq(res, ['OK', 'x', 2], 'execAsPipeline replies');
  // An error reply is returned for its own command only.
  const [a, b, c] = await Promise.allSettled([r.set('nr:pipe:t', 'x'), r.lPush('nr:pipe:t', 'y'), r.get('nr:pipe:t')]);
  eq(a.value, 'OK', 'SET');
  check(b.status === 'rejected' && b.reason.message.startsWith('WRONGTYPE'), `WRONGTYPE in place, got ${b.status}`);
  eq(c.value, 'x', 'command after the error');
});

t.scenario('pipeline-transaction', async (ctx) => {
  const r = await connect(ctx);
  await clean(r, 'nr:multi:');
  const res = await r.multi().set('nr:multi:a', '1').incr('nr:multi:a').incrBy('nr:multi:a', 10).get('nr:multi:a').exec();
  eq(res, ['OK', 2, 12, '12'], 'MULTI/EXEC replies');
  // A runtime error inside EXEC: node-redis rejects with the per-command replies.
  const e = await rejects(r.multi().set('nr:multi:s', 'x').lPush('nr:multi:s', 'y').set('nr:multi:t', 'after').exec(),
    'EXEC with a WRONGTYPE command');
  eq(e.errorIndexes, [1], 'MultiErrorReply.errorIndexes');
  eq([e.replies[0], e.replies[2]], ['OK', 'OK'], 'replies around the failed command');
  check(String(e.replies[1].message).startsWith('WRONGTYPE'), `WRONGTYPE inside EXEC, got ${e.replies[1]}`);
  eq(await r.get('nr:multi:t'), 'after', 'commands after the failing one ran');
  const e2 = await rejects(r.multi().set('nr:multi:u', 'never').addCommand(['INCRBY', 'nr:multi:u']).exec(),
    'EXEC after a queueing error');
  check(e2.message.startsWith('EXECABORT'), `EXECABORT, got ${e2.message}`);
  eq(await r.exists('nr:multi:u'), 0, 'EXECABORT discarded the transaction');
});

t.scenario('watch-optimistic-locking', async (ctx) => {
  const r = await connect(ctx);
  const other = await connect(ctx);
  const k = 'nr:watch:balance';
  await r.set(k, '100');
  let attempts = 0;
  for (;;) {
    attempts++;
    try {
      await r.executeIsolated(async (iso) => {
        await iso.watch(k);
        const bal = Number(await iso.get(k));
        if (attempts === 1) await other.incrBy(k, 5); // concurrent modifier
        await iso.multi().set(k, String(bal * 2)).exec();
      });
      break;
    } catch (e) {
      if (!(e instanceof WatchError)) throw e;
      check(attempts < 5, 'transaction never committed');
    }
  }
  eq(attempts, 2, 'transaction attempts (first must raise WatchError)');
  eq(await r.get(k), '210', 'value after the retried transaction');
  const e = await rejects(r.executeIsolated(async (iso) => {
    await iso.watch(k);
    await other.set(k, '1');
    return iso.multi().set(k, '999').exec();
  }), 'EXEC after the watched key changed');
  check(e instanceof WatchError, `WatchError, got ${e.message}`);
  eq(await r.get(k), '1', 'aborted transaction wrote nothing');
  // Contention: 4 concurrent isolated connections x 25 optimistic increments.
  await r.set('nr:watch:ctr', '0');
  let retries = 0;
  await Promise.all([0, 1, 2, 3].map(async () => {
    for (let i = 0; i < 25; i++) {
      for (;;) {
        try {
          await r.executeIsolated(async (iso) => {
            await iso.watch('nr:watch:ctr');
            const v = Number(await iso.get('nr:watch:ctr'));
            await iso.multi().set('nr:watch:ctr', String(v + 1)).exec();
          });
          break;
        } catch (err) {
          if (!(err instanceof WatchError)) throw err;
          retries++;
        }
      }
    }
  }));
  eq(await r.get('nr:watch:ctr'), '100', `counter after contended transactions (${retries} retries)`);
}, 40000);

t.scenario('pubsub-listeners', async (ctx) => {
  const pub = await connect(ctx);
  const sub = pub.duplicate();
  ctx.clients.push(sub);
  sub.on('error', () => {});
  await sub.connect();
  const got = [];
  await sub.subscribe('nr:chan:news', (message, channel) => got.push(['message', channel, message]));
  await sub.pSubscribe('nr:pat:*', (message, channel) => got.push(['pmessage', channel, message]));
  eq(await pub.publish('nr:chan:news', 'hello'), 1, 'PUBLISH to a channel');
  eq(await pub.publish('nr:pat:one', 'world'), 1, 'PUBLISH matching a pattern');
  eq(await pub.publish('nr:chan:other', 'nobody'), 0, 'PUBLISH with no subscriber');
  await pub.publish('nr:chan:news', 'bye');
  await until(() => got.length >= 3, 'three messages');
  eq(got, [
    ['message', 'nr:chan:news', 'hello'],
    ['pmessage', 'nr:pat:one', 'world'],
    ['message', 'nr:chan:news', 'bye'],
  ], 'messages in order');
  await sub.unsubscribe('nr:chan:news');
  await sub.pUnsubscribe();
  eq(await pub.publish('nr:chan:news', 'late'), 0, 'PUBLISH after unsubscribe');
  eq(await sub.ping(), 'PONG', 'back to normal mode');
});

t.scenario('pubsub-introspection', async (ctx) => {
  const pub = await connect(ctx);
  const sub = pub.duplicate();
  ctx.clients.push(sub);
  sub.on('error', () => {});
  await sub.connect();
  const bufs = [];
  await sub.subscribe(['nr:intro:a', 'nr:intro:b'], (message) => bufs.push(message), true);
  await sub.pSubscribe('nr:intro:*', () => {});
  eq(plain(await pub.pubSubNumSub(['nr:intro:a', 'nr:intro:zz'])), { 'nr:intro:a': 1, 'nr:intro:zz': 0 }, 'PUBSUB NUMSUB');
  eq((await pub.pubSubChannels('nr:intro:*')).sort(), ['nr:intro:a', 'nr:intro:b'], 'PUBSUB CHANNELS');
  check((await pub.pubSubNumPat()) >= 1, 'PUBSUB NUMPAT');
  const payload = Buffer.from([0, 1, 2, 255, 13, 10]);
  eq(await pub.publish('nr:intro:b', payload), 2, 'PUBLISH reaches channel and pattern');
  await until(() => bufs.length >= 1, 'binary message');
  eq(Buffer.compare(bufs[0], payload), 0, 'binary payload intact');
});

t.scenario('blocking-pops', async (ctx) => {
  const r = await connect(ctx);
  await clean(r, 'nr:block:');
  const iso = commandOptions({ isolated: true }); // block on a pool connection
  let t0 = Date.now();
  eq(await r.blPop('nr:block:empty', 1), null, 'BLPOP timeout on empty list');
  let el = Date.now() - t0;
  check(el >= 900 && el < 3000, `BLPOP timeout 1 s took ${el} ms`);
  await r.rPush('nr:block:b', ['x', 'y']);
  eq(plain(await r.blPop(['nr:block:a', 'nr:block:b'], 1)), { key: 'nr:block:b', element: 'x' }, 'BLPOP on ready key');
  eq(plain(await r.brPop('nr:block:b', 1)), { key: 'nr:block:b', element: 'y' }, 'BRPOP');
  t0 = Date.now();
  const waiting = r.blPop(iso, 'nr:block:late', 5);
  await sleep(300);
  eq(await r.rPush('nr:block:late', 'arrived'), 1, 'RPUSH from the main connection');
  eq(plain(await waiting), { key: 'nr:block:late', element: 'arrived' }, 'BLPOP woken by a push');
  el = Date.now() - t0;
  check(el >= 250 && el < 3000, `BLPOP woke after ${el} ms`);
  t0 = Date.now();
  eq(await r.brPop('nr:block:empty', 0.2), null, 'BRPOP fractional timeout');
  check(Date.now() - t0 < 1500, 'fractional BRPOP timeout');
  eq(await r.blMove('nr:block:empty', 'nr:block:dst', 'LEFT', 'RIGHT', 0.2), null, 'BLMOVE timeout');
  await r.rPush('nr:block:src', 'm');
  eq(await r.brPopLPush('nr:block:src', 'nr:block:dst', 1), 'm', 'BRPOPLPUSH');
  eq(await r.bzPopMin('nr:block:zempty', 0.2), null, 'BZPOPMIN timeout');
  const zwait = r.bzPopMin(iso, 'nr:block:z', 5);
  await sleep(200);
  await r.zAdd('nr:block:z', [{ score: 1, value: 'low' }, { score: 2, value: 'high' }]);
  eq(plain(await zwait), { key: 'nr:block:z', value: 'low', score: 1 }, 'BZPOPMIN woken by ZADD');
  eq(plain(await r.bzPopMax('nr:block:z', 1)), { key: 'nr:block:z', value: 'high', score: 2 }, 'BZPOPMAX');
});

t.scenario('scan-iterator', async (ctx) => {
  const r = await connect(ctx);
  await clean(r, 'nr:scan:');
  const ops = [];
  for (let i = 0; i < 1500; i++) ops.push(r.set(`nr:scan:k:${i}`, String(i)));
  for (let i = 0; i < 100; i++) ops.push(r.hSet(`nr:scan:h:${i}`, 'f', String(i)));
  await Promise.all(ops);
  const got = new Set();
  for await (const k of r.scanIterator({ MATCH: 'nr:scan:k:*', COUNT: 100 })) got.add(k);
  eq(got.size, 1500, 'scanIterator match count');
  check([...got].every((k) => /^nr:scan:k:\d+$/.test(k)), 'only matching keys');
  const hashes = new Set();
  for await (const k of r.scanIterator({ MATCH: 'nr:scan:*', TYPE: 'hash', COUNT: 100 })) hashes.add(k);
  eq(hashes.size, 100, 'scanIterator TYPE hash');
});

t.scenario('isolation-pool', async (ctx) => {
  const r = await connect(ctx, { isolationPoolOptions: { min: 0, max: 4 } });
  await r.del(['nr:iso:ctr']);
  const seen = new Set();
  await Promise.all(Array.from({ length: 40 }, () => r.executeIsolated(async (iso) => {
    seen.add(await iso.clientId());
    for (let i = 0; i < 25; i++) await iso.incr('nr:iso:ctr');
  })));
  eq(await r.get('nr:iso:ctr'), '1000', 'counter after 40 isolated tasks');
  check(seen.size >= 2 && seen.size <= 4, `isolated tasks used ${seen.size} connections, pool max 4`);
});

t.scenario('worker-threads', async (ctx) => {
  const r = await connect(ctx);
  await r.del(['nr:pool:ctr', 'nr:pool:list']);
  const results = await Promise.all([0, 1, 2, 3, 4, 5].map((n) => new Promise((resolve, reject) => {
    const w = new Worker(__filename, { workerData: { port: PORT, db: DB, n } });
    w.once('message', resolve);
    w.once('error', reject);
  })));
  eq(results, Array(6).fill('done'), 'worker results');
  eq(await r.get('nr:pool:ctr'), String(6 * 150), 'counter after 6 worker threads');
  eq(await r.lLen('nr:pool:list'), 18, 'list length');
});

t.scenario('client-tracking-redirect', async (ctx) => {
  // node-redis 4.7.1 speaks RESP2 only (RESP3 and its client-side cache came
  // with v5), so the RESP2 form of tracking is exercised with its
  // CLIENT TRACKING / TRACKINGINFO / GETREDIR commands: invalidations
  // redirected to a connection subscribed to __redis__:invalidate.
  console.log('note: node-redis 4.7.1 has no client-side cache API (RESP2 only; added in v5): '
    + 'CLIENT TRACKING with REDIRECT to a __redis__:invalidate subscriber is exercised instead');
  const writer = await connect(ctx);
  const tracker = writer.duplicate();
  ctx.clients.push(tracker);
  tracker.on('error', () => {});
  await tracker.connect();
  const sub = writer.duplicate();
  ctx.clients.push(sub);
  sub.on('error', () => {});
  await sub.connect();
  const subId = await sub.clientId();
  const got = [];
  await sub.subscribe('__redis__:invalidate', (message, channel) => got.push([channel, message]));
  eq(await tracker.clientTracking(true, { REDIRECT: subId }), 'OK', 'CLIENT TRACKING ON REDIRECT');
  eq(await tracker.clientGetRedir(), subId, 'CLIENT GETREDIR');
  const info = plain(await tracker.clientTrackingInfo());
  eq(info.redirect, subId, 'CLIENT TRACKINGINFO redirect');
  check([...info.flags].includes('on'), `CLIENT TRACKINGINFO flags ${[...info.flags]}`);
  await writer.set('nr:csc:k', '1');
  eq(await tracker.get('nr:csc:k'), '1', 'tracked GET');
  await writer.set('nr:csc:k', '2');
  await until(() => got.length >= 1, 'an invalidation message');
  // node-redis hands the payload (an array of keys) over as it parsed it.
  eq(got[0][0], '__redis__:invalidate', 'invalidation channel');
  eq(String(got[0][1]), 'nr:csc:k', 'invalidated key');
  eq(await tracker.clientTracking(false), 'OK', 'CLIENT TRACKING OFF');
  eq(await tracker.clientGetRedir(), -1, 'GETREDIR after OFF');
});

(async () => {
  try {
    const probe = await connect(null);
    await probe.ping();
    await probe.quit();
  } catch (e) {
    for (const s of t.scenarios) console.log(`failed: node-redis/${s.name}: cannot connect: ${e.message}`);
    process.exit(1);
  }
  const failed = await t.run(() => ({ clients: [] }), async (ctx) => {
    for (const c of ctx.clients) {
      try { await c.disconnect(); } catch (e) { /* already closed */ }
    }
  });
  process.exit(failed ? 1 : 0);
})();
