import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logger.ts';
import { plainAddress, type AddressList } from '../settings/address-list.ts';
import { parseProxyHeader, type ProxySource } from './proxy-header.ts';

// PROXY_PROTOCOL=true (docs/decisions/0147): each connection is read here
// before Node's HTTP parser sees it. A peer in TRUSTED_PROXIES must begin
// with a PROXY header, whose source address then stands for the
// connection's peer (socket.remoteAddress) in everything that reads it; any
// other peer is served as plain HTTP from its own address, unless it begins
// with a PROXY header, which nothing but a trusted proxy may send. Refused
// connections are closed: no HTTP answer can be given before the header is
// read.

type ProxyRefusal = 'untrusted' | 'malformed' | 'missing' | 'timeout';

/** How long a connection may take to send its PROXY header: a proxy sends it as it connects. */
const PROXY_HEADER_TIMEOUT_MS = 3000;

interface ProxyProtocolOptions {
  trustedProxies: AddressList;
  log: Logger;
  /** Told of each connection closed for its header. */
  refused: (reason: ProxyRefusal) => void;
}

/** Makes `server` (just listening, no connection taken yet) read each connection's PROXY header before HTTP. */
export function acceptProxyProtocol(server: Server, options: ProxyProtocolOptions): Server {
  // Node's HTTP server takes a connection in its 'connection' listener: it runs once the header is read.
  const httpListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) =>
    readProxyHeader(socket, options, () => {
      for (const listener of httpListeners) listener.call(server, socket);
    }),
  );
  return server;
}

function readProxyHeader(socket: Socket, options: ProxyProtocolOptions, serveHttp: () => void): void {
  const peer = plainAddress(socket.remoteAddress ?? 'unknown');
  const trusted = options.trustedProxies.has(peer);
  let received: Buffer = Buffer.alloc(0);

  const stopWaiting = () => {
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('end', onEnd);
    socket.off('error', onError);
    socket.off('close', stopWaiting);
  };
  const refuse = (reason: ProxyRefusal, problem: string, level: 'warn' | 'debug' = 'warn') => {
    stopWaiting();
    options.log[level]({ peer, reason, problem }, 'PROXY protocol: connection closed before HTTP');
    options.refused(reason);
    socket.destroy();
  };
  const handOver = (rest: Buffer, source: ProxySource | undefined) => {
    stopWaiting();
    // Paused, so that the bytes after the header wait in the socket's buffer until the HTTP parser reads them.
    socket.pause();
    if (source !== undefined) {
      Object.defineProperties(socket, {
        remoteAddress: { value: source.address },
        remotePort: { value: source.port },
        remoteFamily: { value: source.family },
      });
    }
    if (rest.length > 0) socket.unshift(rest);
    serveHttp();
    socket.resume();
  };

  function onData(chunk: Buffer) {
    received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
    const header = parseProxyHeader(received);
    if (header.kind === 'incomplete') return;
    if (header.kind === 'absent') {
      if (trusted) refuse('missing', 'a trusted proxy sent no PROXY header');
      else handOver(received, undefined);
    } else if (!trusted) refuse('untrusted', 'a PROXY header from a peer not in TRUSTED_PROXIES');
    else if (header.kind === 'malformed') refuse('malformed', header.problem);
    else handOver(received.subarray(header.length), header.source);
  }
  function onTimeout() {
    // A plain client that has sent nothing yet is slow to start: the HTTP server's own timeouts take it from here.
    if (!trusted && received.length === 0) handOver(received, undefined);
    else refuse(trusted ? 'timeout' : 'untrusted', 'no complete PROXY header in time', 'debug');
  }
  function onEnd() {
    // Nothing sent at all: a TCP health check.
    if (trusted) refuse('missing', 'the connection ended before its PROXY header', received.length === 0 ? 'debug' : 'warn');
    else {
      stopWaiting();
      socket.destroy();
    }
  }
  function onError() {
    // Reset while its header was awaited: there is no one to answer.
    stopWaiting();
    socket.destroy();
  }
  const timer = setTimeout(onTimeout, PROXY_HEADER_TIMEOUT_MS);
  socket.on('data', onData);
  socket.on('end', onEnd);
  socket.on('error', onError);
  socket.on('close', stopWaiting);
}
