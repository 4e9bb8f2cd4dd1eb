// A small HTTP service on Node.js's own `http` module that leaks as services do: every
// request leaves a Session in a module-level Map that nothing cleans, and a listener on a
// long-lived EventEmitter whose closure holds the session. A client in the same process
// sends the requests; the heap snapshot is written by v8.writeHeapSnapshot().
//
//   node leaky-service.js OUT.heapsnapshot REQUESTS
'use strict';
const http = require('http');
const v8 = require('v8');
const { EventEmitter } = require('events');

const [out, requests] = [process.argv[2], Number(process.argv[3] || 2000)];

class Session {
  constructor(id, path, agent) {
    this.id = id;
    this.path = path;
    this.agent = agent;
    this.created = Date.now();
    this.history = [{ at: this.created, path }];
  }
}

const sessions = new Map();
const bus = new EventEmitter();
bus.setMaxListeners(0);

const server = http.createServer((req, res) => {
  const session = new Session(sessions.size, req.url, req.headers['user-agent'] || '');
  sessions.set('session-' + session.id, session);
  bus.on('config', function onConfig(c) {
    session.config = c;
  });
  res.end('ok ' + session.id);
});

function get(port, path) {
  return new Promise((resolve, reject) => {
    http
      .get({ port, path, agent: false, headers: { 'user-agent': 'leaky-client/1.0' } }, (res) => {
        res.resume();
        res.on('end', resolve);
      })
      .on('error', reject);
  });
}

server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address();
  for (let i = 0; i < requests; i++) {
    await get(port, '/item/' + i);
  }
  server.close(() => {
    global.gc && global.gc();
    v8.writeHeapSnapshot(out);
    console.log(JSON.stringify({ sessions: sessions.size, listeners: bus.listenerCount('config') }));
  });
});
