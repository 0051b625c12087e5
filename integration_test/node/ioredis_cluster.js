'use strict';
// The rate-limiting workloads through ioredis, as one service runs them
// against one server (mode "single": new Redis) or against a cluster (mode
// "cluster": new Redis.Cluster, which routes each key by its slot, follows
// MOVED, and refuses a pipeline or MULTI whose keys span slots). The Go test
// runs both modes and requires the same transcript: the cluster must make
// the same decisions as one node. Keys are per user, so they spread over
// every node; the timestamps of W1 and W2 are given by the client, so the
// decisions do not depend on when the session runs.
//
//   node ioredis_cluster.js host port single|cluster
const Redis = require('ioredis');
const { args, lua, transcript, run } = require('./lib');

const USERS = 30;
const BASE = 1700000000000;

// requests is how many calls user u makes: from 3 to 7, so the users cross
// their limits at different calls.
const requests = (u) => 3 + (u % 5);

run(async () => {
  const { host, port, has } = args();
  const cluster = has('cluster');
  const t = transcript();
  const noRetry = { maxRetriesPerRequest: 0, retryStrategy: () => null };
  const r = cluster
    ? new Redis.Cluster([{ host, port }], { redisOptions: noRetry, clusterRetryStrategy: () => null, maxRedirections: 16 })
    : new Redis({ host, port, ...noRetry });
  await new Promise((resolve, reject) => {
    r.once('ready', resolve);
    r.once('error', reject);
  });
  // The nodes that hold keys: the cluster's masters, or the one server.
  const masters = () => (cluster ? r.nodes('master') : [r]);

  // W8, connection set-up and checks an operator makes.
  await t.rec('ping', r.ping());
  const info = await r.info('server');
  t.note('INFO server has redis_version:7.0.15', info.includes('redis_version:7.0.15\r\n'));
  await t.rec('config get maxclients', r.config('GET', 'maxclients'));

  // W1: the sliding-window log, one MULTI pipeline per request; allowed
  // iff ZCARD <= 3 in any 1 s.
  for (let u = 0; u < USERS; u++) {
    const key = 'limit:u' + u + ':login';
    const decisions = [];
    for (let i = 0; i < requests(u); i++) {
      const now = BASE + i * 250 + (i === 2 ? -250 : 0); // the third call shares the second's ms
      const res = await r.multi()
        .zadd(key, now, String(now))
        .zremrangebyscore(key, 0, now - 1000)
        .zcard(key)
        .expire(key, 60)
        .exec();
      decisions.push(res[2][1] <= 3 ? 'allow' : 'deny:' + res[2][1]);
    }
    t.note('W1 ' + key, decisions);
  }

  // W2: the same window as one script (EVALSHA, EVAL on NOSCRIPT).
  r.defineCommand('slidingWindow', { numberOfKeys: 1, lua: lua('w2_window.lua') });
  for (let u = 0; u < USERS; u++) {
    const key = 'limit:u' + u + ':w2';
    const counts = [];
    for (let i = 0; i < requests(u); i++) {
      const now = BASE + i * 300;
      counts.push(await r.slidingWindow(key, now, now - 1000, 60));
    }
    t.note('W2 ' + key, counts.map((c) => (c <= 3 ? 'allow' : 'deny:' + c)));
  }

  // W3: a fixed-window counter, INCR and EXPIRE NX in MULTI; allowed iff
  // the counter <= 4.
  for (let u = 0; u < USERS; u++) {
    const key = 'rl:u' + u + ':1700000000';
    const decisions = [];
    for (let i = 0; i < requests(u); i++) {
      const res = await r.multi().incr(key).expire(key, 60, 'NX').exec();
      decisions.push(res[0][1] <= 4 ? 'allow' : 'deny:' + res[0][1]);
    }
    const ttl = await r.ttl(key);
    t.note('W3 ' + key, { decisions, ttl59to60: ttl >= 59 && ttl <= 60 });
  }

  // W4: CL.THROTTLE, burst 3, 10 per minute. ioredis knows no key of
  // CL.THROTTLE, so the cluster client sends it to any node and follows
  // the MOVED. The first three fields are exact; the times may cross a
  // second between the two sessions.
  for (let u = 0; u < USERS; u++) {
    const key = 'throttle:{tenant' + u + '}:api';
    const replies = [];
    for (let i = 0; i < requests(u); i++) {
      replies.push((await r.call('CL.THROTTLE', key, 3, 10, 60)).slice(0, 3));
    }
    t.note('W4 ' + key, replies);
  }

  // W8: what an operator does with those keys: count them, list them,
  // look at a throttle key, reset a user.
  let total = 0;
  for (const m of masters()) total += await m.dbsize();
  t.note('dbsize over the masters', total);
  const found = [];
  for (const m of masters()) {
    await new Promise((resolve, reject) => {
      m.scanStream({ match: 'limit:*', count: 100 })
        .on('data', (keys) => found.push(...keys))
        .on('end', resolve)
        .on('error', reject);
    });
  }
  t.note('scan limit:* count', found.length);
  t.note('scan limit:* keys', found.sort());
  const tk = 'throttle:{tenant7}:api';
  await t.rec('get a throttle key is a TAT in ns', r.get(tk).then((v) => /^[0-9]{19}$/.test(v)));
  await t.rec('pttl of a throttle key is set', r.pttl(tk).then((v) => v > 0 && v <= 60000));
  await t.rec('del (reset a user)', r.del(tk));
  await t.rec('exists after del', r.exists(tk));
  await t.rec('CL.THROTTLE after the reset', r.call('CL.THROTTLE', tk, 3, 10, 60).then((v) => v.slice(0, 3)));
  await t.rec('type of a window', r.type('limit:u3:login'));
  await t.rec('zcard of a window', r.zcard('limit:u3:login'));
  await t.rec('quit', r.quit());
  t.done();
});
