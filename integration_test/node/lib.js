'use strict';
// Shared by the session scripts: arguments, the workload scripts, and a
// transcript written as JSON on stdout for node_test.go to compare.
const fs = require('fs');
const path = require('path');

// Command line: node <script> <host> <port> [feature,feature...]. The Go
// test names the features cellserver has (eval, zset), so both servers run
// the very same session.
function args() {
  const [host, port, features = ''] = process.argv.slice(2);
  if (!host || !port) {
    console.error('usage: node ' + path.basename(process.argv[1]) + ' host port [features]');
    process.exit(2);
  }
  const set = new Set(features.split(',').filter(Boolean));
  return { host, port: Number(port), has: (f) => set.has(f) };
}

// The Lua scripts of ../testdata, shared with the Go and Python sessions.
function lua(name) {
  return fs.readFileSync(path.join(__dirname, '..', 'testdata', name), 'utf8');
}

// show makes a reply printable and comparable: Buffers as quoted binary
// strings, Maps and Sets in sorted order, errors as their message.
function show(v) {
  if (v instanceof Error) return { error: v.message };
  if (Buffer.isBuffer(v)) return { buffer: v.toString('latin1') };
  if (v instanceof Map) return { map: [...v.entries()].map(([k, x]) => [show(k), show(x)]).sort((a, b) => JSON.stringify(a) < JSON.stringify(b) ? -1 : 1) };
  if (v instanceof Set) return { set: [...v].map(show).sort() };
  if (Array.isArray(v)) return v.map(show);
  if (typeof v === 'bigint') return { bigint: v.toString() };
  if (v === undefined) return { undefined: true };
  if (v !== null && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = show(v[k]);
    return o;
  }
  return v;
}

// A transcript: rec(label, promise) awaits the call and records its value
// or its error; the lines and the CL.THROTTLE replies go out as JSON.
function transcript() {
  const lines = [];
  const throttle = [];
  async function rec(label, p) {
    let v;
    try {
      v = await p;
    } catch (e) {
      v = e;
    }
    lines.push(label + ' -> ' + JSON.stringify(show(v)));
    return v;
  }
  function note(label, v) {
    lines.push(label + ' -> ' + JSON.stringify(show(v)));
  }
  async function cl(label, p) {
    let v;
    try {
      v = await p;
    } catch (e) {
      v = e;
    }
    throttle.push(label + ' -> ' + JSON.stringify(show(v)));
    return v;
  }
  function done() {
    process.stdout.write(JSON.stringify({ lines, throttle }) + '\n');
  }
  return { rec, note, cl, done };
}

// run calls main and makes any uncaught failure a non-zero exit with its
// stack, so the Go test shows why a session stopped.
function run(main) {
  const timer = setTimeout(() => {
    console.error('session timed out');
    process.exit(3);
  }, 20000);
  main().then(() => {
    clearTimeout(timer);
  }, (e) => {
    console.error(e && e.stack ? e.stack : e);
    process.exit(1);
  });
}

module.exports = { args, lua, show, transcript, run };
