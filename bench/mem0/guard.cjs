'use strict';
// Network guard, preloaded with `node --require ./guard.cjs` before any
// other module loads. Every TCP connection (net.Socket#connect, which
// http, https, tls and the built-in fetch all go through), every UDP send
// and every DNS query is checked: loopback destinations pass, anything else
// is refused with an error and counted. The benchmark fails when the count
// is not zero, so "Mem0 made no outbound connection" is measured, not
// assumed. globalThis.__netGuard exposes the count and the refused
// destinations.

const net = require('node:net');
const dns = require('node:dns');
const dgram = require('node:dgram');

const state = { blocked: 0, destinations: [] };

function isLoopbackHost(host) {
  if (host === undefined || host === null || host === '') return true; // Node's default is localhost
  let h = String(host).toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (net.isIPv6(h)) {
    if (h === '::1') return true;
    const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
    return m !== null && m[1].startsWith('127.');
  }
  return false; // any other name would need a DNS query: refuse
}

function refuse(what, dest) {
  state.blocked++;
  if (state.destinations.length < 50) state.destinations.push(`${what} ${dest}`);
  const err = new Error(`network guard: ${what} to ${dest} refused (only loopback is allowed)`);
  err.code = 'ENETGUARD';
  return err;
}

// net.Socket#connect takes (options[, cb]), (port[, host][, cb]) or
// (path[, cb]); an array is the internal normalized form.
const origConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  let opts = args[0];
  if (Array.isArray(opts)) opts = opts[0];
  let host;
  let port;
  let isPath = false;
  if (opts !== null && typeof opts === 'object') {
    // http passes path: null for TCP; only a non-empty string is a pipe.
    if (typeof opts.path === 'string' && opts.path !== '') isPath = true;
    host = opts.host;
    port = opts.port;
  } else if (typeof opts === 'string' && !/^\d+$/.test(opts)) {
    isPath = true;
  } else {
    port = opts;
    if (typeof args[1] === 'string') host = args[1];
  }
  if (!isPath && !isLoopbackHost(host)) {
    const err = refuse('tcp', `${host}:${port}`);
    process.nextTick(() => this.destroy(err));
    return this;
  }
  return origConnect.apply(this, args);
};

const origSend = dgram.Socket.prototype.send;
dgram.Socket.prototype.send = function guardedSend(...args) {
  // send(msg[, offset, length], port[, address][, cb]): the address is the
  // first string after the port.
  const addr = args.find((a, i) => i > 0 && typeof a === 'string');
  if (!isLoopbackHost(addr)) {
    const err = refuse('udp', String(addr));
    const cb = args.find((a) => typeof a === 'function');
    if (cb) process.nextTick(() => cb(err));
    return;
  }
  return origSend.apply(this, args);
};

function guardLookup(orig) {
  return function guardedLookup(hostname, ...rest) {
    if (!isLoopbackHost(hostname)) {
      const err = refuse('dns', String(hostname));
      const cb = rest.find((a) => typeof a === 'function');
      if (cb) {
        process.nextTick(() => cb(err));
        return;
      }
      return Promise.reject(err);
    }
    return orig.call(this, hostname, ...rest);
  };
}
dns.lookup = guardLookup(dns.lookup);
dns.promises.lookup = guardLookup(dns.promises.lookup);
for (const name of ['resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveCname', 'resolveTxt', 'resolveSrv', 'resolveMx', 'resolveNs']) {
  if (typeof dns[name] === 'function') dns[name] = guardLookup(dns[name]);
  if (typeof dns.promises[name] === 'function') dns.promises[name] = guardLookup(dns.promises[name]);
}

// selfTest proves the guard catches what it claims to: a raw socket, an
// HTTP request and a fetch to documentation-only addresses (never routed)
// must all be refused and counted. The counters are then reset so the
// benchmark's own count starts at zero.
async function selfTest() {
  const http = require('node:http');
  const before = state.blocked;
  const attempts = [
    new Promise((resolve) => {
      const s = net.connect({ host: '192.0.2.1', port: 80 });
      s.on('error', (e) => resolve(e.code === 'ENETGUARD'));
      s.on('connect', () => { s.destroy(); resolve(false); });
    }),
    new Promise((resolve) => {
      const req = http.get('http://198.51.100.7:8080/', () => resolve(false));
      req.on('error', (e) => resolve(e.code === 'ENETGUARD'));
    }),
    fetch('http://203.0.113.9/').then(() => false, () => true),
    new Promise((resolve) => dns.lookup('example.invalid', (e) => resolve(e && e.code === 'ENETGUARD'))),
  ];
  const ok = await Promise.all(attempts);
  const counted = state.blocked - before;
  const passed = ok.every(Boolean) && counted === attempts.length;
  state.blocked = 0;
  state.destinations = [];
  return { passed, refused: ok.filter(Boolean).length, counted, attempts: attempts.length };
}

globalThis.__netGuard = {
  get blocked() { return state.blocked; },
  get destinations() { return state.destinations.slice(); },
  selfTest,
  isLoopbackHost,
};
