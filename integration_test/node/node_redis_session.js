'use strict';
// A node-redis (the "redis" package) session: its handshake (HELLO 3 by
// default, or RESP2), commands, multi() (W1, W3), scriptLoad/evalSha/eval
// (W2), sendCommand for CL.THROTTLE (W4), and scanIterator.
const { createClient } = require('redis');
const { args, lua, transcript, run } = require('./lib');

run(async () => {
  const { host, port, has } = args();
  const resp = has('resp2') ? 2 : 3;
  const t = transcript();
  const c = createClient({ socket: { host, port, reconnectStrategy: false }, RESP: resp });
  let failure;
  c.on('error', (e) => { failure = e; });
  await c.connect();
  t.note('isReady', c.isReady);

  await t.rec('ping', c.ping());
  await t.rec('set', c.set('greeting', 'hello'));
  await t.rec('get', c.get('greeting'));
  await t.rec('get missing', c.get('missing'));
  await t.rec('set NX EX', c.set('once', '1', { NX: true, EX: 10 }));
  await t.rec('set NX EX again', c.set('once', '2', { NX: true, EX: 10 }));
  await new Promise((resolve) => setTimeout(resolve, 5)); // TTL rounds: 9.995 s is 10
  await t.rec('ttl', c.ttl('once'));
  await t.rec('incr', c.incr('n'));
  await t.rec('incrByFloat', c.incrByFloat('f', 0.25));
  await t.rec('incr not a number', c.incr('greeting'));
  await t.rec('hSet', c.hSet('h', { a: '1', b: 'two' }));
  await t.rec('hGetAll', c.hGetAll('h'));
  await t.rec('rPush', c.rPush('l', ['x', 'y']));
  await t.rec('lRange', c.lRange('l', 0, -1));
  await t.rec('mGet', c.mGet(['greeting', 'n', 'nope']));
  await t.rec('wrong type', c.get('h'));
  await t.rec('clientSetName', c.clientSetName('nr-1'));
  await t.rec('clientGetName', c.clientGetName());
  const info = await c.info('server');
  t.note('INFO server has redis_version:7.0.15', String(info).includes('redis_version:7.0.15\r\n'));
  await t.rec('configGet', c.configGet('maxclients'));
  await t.rec('sendCommand unknown', c.sendCommand(['NOSUCH', 'x']));

  // W3 in multi().
  for (let i = 0; i < 3; i++) {
    await t.rec('W3 multi', c.multi().incr('rl:u:1700000000').expire('rl:u:1700000000', 60, 'NX').exec());
  }
  await t.rec('W3 ttl', c.ttl('rl:u:1700000000'));
  // exec() rejects when a command failed; the error holds every reply.
  await t.rec('multi with a failing command', c.multi().set('s', 'x').incr('s').incr('c').exec()
    .catch((e) => ({ message: e.message, replies: e.replies, errorIndexes: e.errorIndexes })));
  await t.rec('pipeline (execAsPipeline)', c.multi().set('p', '1').incr('p').get('p').execAsPipeline());

  if (has('zset')) {
    const base = 1700000000000;
    for (const off of [0, 100, 100, 200, 1150]) {
      const now = base + off;
      await t.rec('W1 multi at +' + off, c.multi()
        .zAdd('limit:u:a', { score: now, value: String(now) })
        .zRemRangeByScore('limit:u:a', 0, now - 1000)
        .zCard('limit:u:a')
        .expire('limit:u:a', 2)
        .exec());
    }
    await t.rec('W1 zRangeWithScores', c.zRangeWithScores('limit:u:a', 0, -1));
  }

  if (has('eval')) {
    await t.rec('eval mixed reply', c.eval("return {1, 'two', 3.9, false, {redis.call('TYPE', KEYS[1])}}", { keys: ['h'] }));
  }

  if (has('eval') && has('zset')) {
    const src = lua('w2_window.lua');
    const sha = await t.rec('scriptLoad', c.scriptLoad(src));
    const base = 1700000000000;
    for (let i = 0; i < 3; i++) {
      const now = base + i * 100;
      await t.rec('W2 evalSha', c.evalSha(sha, { keys: ['limit:u:w2'], arguments: [String(now), String(now - 1000), '2'] }));
    }
    await t.rec('scriptFlush', c.scriptFlush());
    await t.rec('W2 evalSha after flush', c.evalSha(sha, { keys: ['limit:u:w2'], arguments: [String(base + 400), String(base - 600), '2'] }));
    await t.rec('W2 eval', c.eval(src, { keys: ['limit:u:w2'], arguments: [String(base + 500), String(base - 500), '2'] }));
    await t.rec('scriptExists', c.scriptExists(sha));
  }

  await t.cl('user123 first', c.sendCommand(['CL.THROTTLE', 'user123', '15', '30', '60']));
  await t.cl('user123 second', c.sendCommand(['CL.THROTTLE', 'user123', '15', '30', '60']));
  await t.cl('z0 first', c.sendCommand(['CL.THROTTLE', 'z0', '0', '1', '1']));
  await t.cl('z0 second', c.sendCommand(['CL.THROTTLE', 'z0', '0', '1', '1']));
  await t.cl('bad argument', c.sendCommand(['CL.THROTTLE', 'k', 'x', '1', '1']));

  // The limiter keys exist on cellserver only: out of the listing.
  await c.del(['user123', 'z0', 'k']);
  const found = [];
  for await (const keys of c.scanIterator({ MATCH: '*', COUNT: 3 })) {
    found.push(...keys);
  }
  t.note('scanIterator keys', found.sort());
  t.note('connection errors', failure ? failure.message : null);
  await c.close();
  t.done();
});
