'use strict';
// ioredis and node-redis against a server with requirepass s3cret: their
// connection set-up (AUTH or HELLO AUTH, SELECT of db, the connection name,
// ioredis's INFO ready check after AUTH), and how a wrong or missing
// password surfaces.
const Redis = require('ioredis');
const { createClient } = require('redis');
const { args, transcript, run } = require('./lib');

run(async () => {
  const { host, port } = args();
  const t = transcript();

  const io = new Redis({ host, port, password: 's3cret', db: 4, connectionName: 'io-svc', maxRetriesPerRequest: 0, retryStrategy: () => null });
  await new Promise((resolve, reject) => { io.once('ready', resolve); io.once('error', reject); });
  t.note('ioredis status', io.status);
  await t.rec('ioredis client getname', io.client('GETNAME'));
  await t.rec('ioredis set', io.set('io-key', '1'));
  await t.rec('ioredis dbsize (db 4)', io.dbsize());
  await t.rec('ioredis quit', io.quit());

  const bad = new Redis({ host, port, password: 'nope', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let badError = null;
  bad.on('error', (e) => { badError = badError || e.message; });
  await t.rec('ioredis wrong password', bad.connect());
  t.note('ioredis wrong password, error event', badError);
  bad.disconnect();

  for (const RESP of [3, 2]) {
    const c = createClient({ socket: { host, port, reconnectStrategy: false }, password: 's3cret', database: 4, name: 'nr-svc', RESP });
    c.on('error', () => {});
    await c.connect();
    await t.rec('node-redis RESP' + RESP + ' clientGetName', c.clientGetName());
    await t.rec('node-redis RESP' + RESP + ' dbSize (db 4)', c.dbSize());
    await c.close();
    const w = createClient({ socket: { host, port, reconnectStrategy: false }, password: 'nope', RESP });
    w.on('error', () => {});
    await t.rec('node-redis RESP' + RESP + ' wrong password', w.connect().then(() => 'connected'));
  }
  t.done();
  process.exit(0);
});
