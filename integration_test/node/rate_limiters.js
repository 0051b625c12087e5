'use strict';
// Node rate limiters with Redis stores, used through their public APIs:
// rate-limiter-flexible's RateLimiterRedis on ioredis and on node-redis, and
// express-rate-limit with rate-limit-redis in a real Express app answering
// HTTP on 127.0.0.1. Times are recorded in whole seconds, rounded: the
// windows here are a minute long and the two sessions run at once.
const Redis = require('ioredis');
const { createClient } = require('redis');
const { RateLimiterRedis } = require('rate-limiter-flexible');
const { args, transcript, run } = require('./lib');

// res shows a RateLimiterRes (resolved or thrown) without its exact ms.
function res(r) {
  if (r instanceof Error) return { error: r.message };
  return {
    remainingPoints: r.remainingPoints,
    consumedPoints: r.consumedPoints,
    isFirstInDuration: r.isFirstInDuration,
    secondsBeforeNext: Math.round(r.msBeforeNext / 1000),
  };
}

async function limiterSession(t, label, limiter) {
  for (let i = 1; i <= 6; i++) {
    await t.rec(label + ' consume #' + i, limiter.consume('10.0.0.1').then(res, (r) => ({ rejected: res(r) })));
  }
  await t.rec(label + ' consume 2 points', limiter.consume('10.0.0.2', 2).then(res, (r) => ({ rejected: res(r) })));
  await t.rec(label + ' get', limiter.get('10.0.0.2').then((r) => r && res(r)));
  await t.rec(label + ' get unknown', limiter.get('10.0.0.9'));
  await t.rec(label + ' penalty', limiter.penalty('10.0.0.2', 1).then(res));
  await t.rec(label + ' reward', limiter.reward('10.0.0.2', 2).then(res));
  await t.rec(label + ' block', limiter.block('10.0.0.3', 30).then(res));
  await t.rec(label + ' consume while blocked', limiter.consume('10.0.0.3').then(res, (r) => ({ rejected: res(r) })));
  await t.rec(label + ' delete', limiter.delete('10.0.0.1'));
  await t.rec(label + ' consume after delete', limiter.consume('10.0.0.1').then(res, (r) => ({ rejected: res(r) })));
}

// expressSession serves GET / behind express-rate-limit with a Redis store
// and asks it five times: three pass, two get 429.
async function expressSession(t, client) {
  const express = require('express');
  const { rateLimit } = require('express-rate-limit');
  const { RedisStore } = require('rate-limit-redis');
  const app = express();
  app.use(rateLimit({
    windowMs: 60 * 1000,
    limit: 3,
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    store: new RedisStore({ sendCommand: (...a) => client.sendCommand(a), prefix: 'erl:' }),
  }));
  app.get('/', (req, res) => res.send('hello'));
  const server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = 'http://127.0.0.1:' + server.address().port + '/';
  try {
    for (let i = 1; i <= 5; i++) {
      const r = await fetch(url);
      const reset = Number(r.headers.get('ratelimit-reset'));
      t.note('express GET #' + i, {
        status: r.status,
        limit: r.headers.get('ratelimit-limit'),
        remaining: r.headers.get('ratelimit-remaining'),
        resetIn59To60s: reset >= 59 && reset <= 60,
        body: await r.text(),
      });
    }
    await t.rec('express store key ttl', client.ttl('erl:127.0.0.1').then((s) => s >= 59 && s <= 60));
    await t.rec('express store key value', client.get('erl:127.0.0.1'));
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

run(async () => {
  const { host, port, has } = args();
  const t = transcript();
  const io = new Redis({ host, port, maxRetriesPerRequest: 0, retryStrategy: () => null });
  const nr = createClient({ socket: { host, port, reconnectStrategy: false } });
  nr.on('error', () => {});
  await nr.connect();

  // duration 0 (points never expire) takes the MULTI path: INCRBY + PTTL.
  await limiterSession(t, 'rlf ioredis no expiry',
    new RateLimiterRedis({ storeClient: io, keyPrefix: 'rlf0', points: 4, duration: 0 }));
  await limiterSession(t, 'rlf node-redis no expiry',
    new RateLimiterRedis({ storeClient: nr, useRedisPackage: true, keyPrefix: 'rlfnr0', points: 4, duration: 0 }));
  if (has('eval')) {
    // A duration takes the Lua path: SET NX EX + INCRBY + PTTL in a script
    // that ioredis runs by EVALSHA with EVAL on NOSCRIPT.
    await limiterSession(t, 'rlf ioredis',
      new RateLimiterRedis({ storeClient: io, keyPrefix: 'rlfio', points: 4, duration: 60, blockDuration: 0 }));
    await limiterSession(t, 'rlf node-redis',
      new RateLimiterRedis({ storeClient: nr, useRedisPackage: true, keyPrefix: 'rlfnr', points: 4, duration: 60 }));
    await limiterSession(t, 'rlf ioredis, blocking when over',
      new RateLimiterRedis({ storeClient: io, keyPrefix: 'rlfb', points: 4, duration: 60, blockDuration: 120 }));
    await expressSession(t, nr);
  }
  await io.quit();
  await nr.close();
  t.done();
});
