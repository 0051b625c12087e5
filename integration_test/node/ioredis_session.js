'use strict';
// An ioredis session as services write them: the INFO ready check on
// connect, commands, pipeline() and multi() (W1, W3), scripts declared with
// defineCommand (EVALSHA, falling back to EVAL on NOSCRIPT) for W2 and W5,
// CL.THROTTLE through call() (W4), and scanStream.
const Redis = require('ioredis');
const { args, lua, transcript, run } = require('./lib');

run(async () => {
  const { host, port, has } = args();
  const t = transcript();
  const r = new Redis({ host, port, enableReadyCheck: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  await new Promise((resolve, reject) => {
    r.once('ready', resolve);
    r.once('error', reject);
  });
  t.note('status after the ready check', r.status);

  await t.rec('ping', r.ping());
  await t.rec('set binary', r.set('greeting', Buffer.from('hello\x00\r\nworld\xff', 'latin1')));
  await t.rec('getBuffer', r.getBuffer('greeting'));
  await t.rec('get missing', r.get('missing'));
  await t.rec('set NX EX', r.set('once', '1', 'EX', 10, 'NX'));
  await t.rec('set NX EX again', r.set('once', '2', 'EX', 10, 'NX'));
  await new Promise((resolve) => setTimeout(resolve, 5)); // TTL rounds: 9.995 s is 10
  await t.rec('ttl', r.ttl('once'));
  await t.rec('incr', r.incr('n'));
  await t.rec('incrbyfloat', r.incrbyfloat('f', '0.1'));
  await t.rec('incr not a number', r.incr('greeting'));
  await t.rec('hset', r.hset('h', { a: '1', b: 'two' }));
  await t.rec('hgetall', r.hgetall('h'));
  await t.rec('hincrby', r.hincrby('h', 'a', 5));
  await t.rec('rpush', r.rpush('l', 'x', 'y', 'z'));
  await t.rec('lrange', r.lrange('l', 0, -1));
  await t.rec('wrong type', r.lpush('h', 'x'));
  await t.rec('client setname', r.client('SETNAME', 'io-1'));
  await t.rec('client getname', r.client('GETNAME'));
  const info = await r.info('server');
  t.note('INFO server has redis_version:7.0.15', info.includes('redis_version:7.0.15\r\n'));
  await t.rec('config get', r.config('GET', 'maxclients'));
  await t.rec('unknown command', r.call('NOSUCH', 'x'));

  // pipeline(): everything is sent, then the replies come back as
  // [error, value] pairs.
  await t.rec('pipeline', r.pipeline().set('p1', 'a').incr('p1').get('p1').del('p1').exec());

  // W3: a fixed-window counter in MULTI/EXEC.
  for (let i = 0; i < 3; i++) {
    await t.rec('W3 multi', r.multi().incr('rl:u:1700000000').expire('rl:u:1700000000', 60, 'NX').exec());
  }
  await t.rec('W3 ttl', r.ttl('rl:u:1700000000'));
  await t.rec('multi with a failing command', r.multi().set('s', 'x').incr('s').incr('c').exec());

  // W1: the sliding-window log as one MULTI pipeline.
  if (has('zset')) {
    const base = 1700000000000;
    for (const off of [0, 100, 100, 200, 300, 400, 1150]) {
      const now = base + off;
      await t.rec('W1 multi at +' + off, r.multi()
        .zadd('limit:u:a', now, String(now))
        .zremrangebyscore('limit:u:a', 0, now - 1000)
        .zcard('limit:u:a')
        .expire('limit:u:a', 2)
        .exec());
    }
    await t.rec('W1 zrange', r.zrange('limit:u:a', 0, -1, 'WITHSCORES'));
  }

  if (has('eval')) {
    await t.rec('eval', r.eval("return {KEYS[1], ARGV[1], 3.7, false, redis.call('PING')}", 1, 'k', 'v'));
    await t.rec('eval error', r.eval("return redis.call('INCR', KEYS[1])", 1, 'h'));
    // W7 through defineCommand: EVALSHA, EVAL on NOSCRIPT, and in a
    // pipeline (where ioredis loads the script first).
    r.defineCommand('funnel', { numberOfKeys: 1, lua: lua('w7_funnel.lua') });
    const base = 1700000000000;
    await t.rec('W7 funnel', r.funnel('funnel:io', 5, 1, base, 2, 60));
    await t.rec('W7 funnel', r.funnel('funnel:io', 5, 1, base + 700, 2, 60));
    await t.rec('script flush', r.script('FLUSH'));
    await t.rec('W7 funnel after SCRIPT FLUSH', r.funnel('funnel:io', 5, 1, base + 1400, 2, 60));
    await t.rec('script flush', r.script('FLUSH'));
    await t.rec('W7 funnel in a pipeline', r.pipeline()
      .funnel('funnel:io', 5, 1, base + 2100, 1, 60)
      .funnel('funnel:io', 5, 1, base + 2800, 1, 60)
      .hgetall('funnel:io')
      .exec());
  }

  // W2 and W5: scripts through defineCommand (on sorted sets).
  if (has('eval') && has('zset')) {
    r.defineCommand('slidingWindow', { numberOfKeys: 1, lua: lua('w2_window.lua') });
    r.defineCommand('tryAcquire', { numberOfKeys: 3, lua: lua('w5_acquire.lua') });
    const base = 1700000000000;
    for (let i = 0; i < 4; i++) {
      const now = base + i * 100;
      await t.rec('W2 slidingWindow', r.slidingWindow('limit:u:w2', now, now - 1000, 2));
    }
    await t.rec('script flush', r.script('FLUSH'));
    await t.rec('W2 after SCRIPT FLUSH', r.slidingWindow('limit:u:w2', base + 500, base - 500, 2));
    await t.rec('W2 in a pipeline', r.pipeline()
      .slidingWindow('limit:u:w2', base + 600, base - 400, 2)
      .slidingWindow('limit:u:w2', base + 700, base - 300, 2)
      .zcard('limit:u:w2')
      .exec());

    await t.rec('W5 trySetRate', r.multi()
      .hsetnx('L', 'rate', 3).hsetnx('L', 'interval', 1000).hsetnx('L', 'type', 0).pexpire('L', 3600000)
      .exec());
    const keys = ['L', '{L}:value', '{L}:permits'];
    let i = 0;
    for (const off of [0, 10, 20, 30, 500, 1005, 1015, 1020]) {
      const id = Buffer.from([0, 0xff, 0x10, i++, 0x0d, 0x0a, 0x80, 0x7f]);
      await t.rec('W5 tryAcquire at +' + off, r.tryAcquire(...keys, 1, base + off, id));
    }
    await t.rec('W5 too many', r.tryAcquire(...keys, 4, base + 2000, 'x'));
    await t.rec('W5 not initialised', r.tryAcquire('nope', '{nope}:value', '{nope}:permits', 1, base, 'x'));
    await t.rec('W5 permits', r.zrangeBuffer('{L}:permits', 0, -1, 'WITHSCORES'));
    await t.rec('W5 value', r.get('{L}:value'));
  }

  // W4: CL.THROTTLE, compared with redis-cell's vectors by the Go test.
  await t.cl('user123 first', r.call('CL.THROTTLE', 'user123', 15, 30, 60));
  await t.cl('user123 second', r.call('CL.THROTTLE', 'user123', 15, 30, 60));
  await t.cl('t3 pipeline', r.pipeline()
    .call('CL.THROTTLE', 't3', 2, 3, 1).call('CL.THROTTLE', 't3', 2, 3, 1)
    .call('CL.THROTTLE', 't3', 2, 3, 1).call('CL.THROTTLE', 't3', 2, 3, 1)
    .exec());
  await t.cl('bad argument', r.call('CL.THROTTLE', 'k', 'x', 1, 1));

  // scanStream walks SCAN to the end; the order is the server's own. The
  // limiter keys exist on cellserver only: out of the listing.
  await r.del('user123', 't3', 'k');
  const found = [];
  await new Promise((resolve, reject) => {
    r.scanStream({ match: '*', count: 3 })
      .on('data', (keys) => found.push(...keys))
      .on('end', resolve)
      .on('error', reject);
  });
  t.note('scanStream keys', found.sort());
  await t.rec('quit', r.quit());
  t.done();
});
