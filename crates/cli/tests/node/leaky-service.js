// A small HTTP service on Node.js's own `http` module that leaks as services do: every
// request leaves a Session (with the client's token) in a module-level Map that nothing cleans, a listener on a
// long-lived EventEmitter whose closure holds the session, and a page in a closure's cache
// keyed by the request's path. A client in the same process sends the requests; heap
// snapshots are written by v8.writeHeapSnapshot() from a timer callback between batches of
// requests, as a service that writes one on a schedule does. With `steady`, the same service
// cleans up after each request (the session deleted, the listener removed, the cache bounded):
// its heap does not grow.
//
//   node leaky-service.js OUT.heapsnapshot REQUESTS             # one snapshot, OUT
//   node leaky-service.js OUT.heapsnapshot REQUESTS N [steady]  # N snapshots, OUT-1 .. OUT-N
'use strict';
const http = require('http');
const v8 = require('v8');
const { EventEmitter } = require('events');
const crypto = require('crypto');

const out = process.argv[2];
const requests = Number(process.argv[3] || 2000);
const snapshots = Number(process.argv[4] || 1);
const steady = process.argv[5] === 'steady';

class Session {
  constructor(id, path, agent, token) {
    this.id = id;
    this.path = path;
    this.agent = agent;
    this.token = token;
    this.created = Date.now();
    this.history = [{ at: this.created, path }];
  }
}

const sessions = new Map();
const bus = new EventEmitter();
bus.setMaxListeners(0);

// Rendered pages by path, kept by the closure that renders them.
const render = (() => {
  const pages = steady ? new Map() : {};
  return (path) => {
    if (steady) {
      if (!pages.has(path)) pages.set(path, `<html><body>${path}</body></html>`.repeat(4));
      if (pages.size > 50) pages.delete(pages.keys().next().value);
      return pages.get(path);
    }
    return pages[path] || (pages[path] = `<html><body>${path}</body></html>`.repeat(4));
  };
})();

let served = 0;
const server = http.createServer((req, res) => {
  const token = (req.headers.authorization || '').replace(/^Bearer /, '');
  const session = new Session(served++, req.url, req.headers['user-agent'] || '', token);
  const key = 'session-' + session.id;
  sessions.set(key, session);
  const onConfig = function onConfig(c) {
    session.config = c;
  };
  bus.on('config', onConfig);
  res.end(render(req.url).length + ' ' + session.id);
  if (steady) {
    sessions.delete(key);
    bus.off('config', onConfig);
  }
});

// The client signs in as a user of its own per request: a JSON Web Token (HS256), which the
// service keeps in the session.
const b64url = (x) => Buffer.from(x).toString('base64url');
function jwt(user) {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify({ sub: 'user-' + user, iat: 1795000000 + user }));
  const sig = crypto.createHmac('sha256', 'leaky-secret').update(head + '.' + body).digest('base64url');
  return head + '.' + body + '.' + sig;
}

function get(port, path, user) {
  return new Promise((resolve, reject) => {
    const headers = { 'user-agent': 'leaky-client/1.0', authorization: 'Bearer ' + jwt(user) };
    http
      .get({ port, path, agent: false, headers }, (res) => {
        res.resume();
        res.on('end', resolve);
      })
      .on('error', reject);
  });
}

// Written from a timer's callback: the service's state is held by its closures, not by the
// client loop's frame.
function snapshot(file) {
  return new Promise((resolve) =>
    setTimeout(() => {
      global.gc && global.gc();
      v8.writeHeapSnapshot(file);
      resolve();
    }, 0)
  );
}

server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address();
  const batch = Math.ceil(requests / snapshots);
  for (let s = 1; s <= snapshots; s++) {
    for (let i = 0; i < batch && served < requests; i++) {
      await get(port, '/item/' + served, served);
    }
    await snapshot(snapshots === 1 ? out : out.replace(/(\.heapsnapshot)?$/, `-${s}$1`));
  }
  server.close(() => {
    console.log(JSON.stringify({ sessions: sessions.size, listeners: bus.listenerCount('config'), served }));
  });
});
