import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Clock } from '../../clock/clock.ts';

/**
 * Where an open connection is: `handshake` (TCP accepted, TLS not finished), `headers` (TLS done,
 * no complete request headers yet), `request` (a request is being answered), `idle` (keep-alive
 * between requests; one whose next request's headers are still arriving counts as idle too).
 * `request` and `idle` are told apart only when asked (`idle`), from the last answer's
 * `writableFinished`: a listener on every answer's 'close' held about 60 MB more RSS after 100,000
 * reviews (bench/RESULTS.md, "Answers written after the turn").
 */
export type ConnectionState = 'handshake' | 'headers' | 'request' | 'idle';

export interface Connection {
  readonly client: string;
  /** The table's clock.monotonic() at accept. */
  readonly acceptedAt: number;
  readonly state: ConnectionState;
}

interface Entry extends Connection {
  state: ConnectionState;
  /** The last request's answer: answers go out in order, so once it is written the connection is idle. */
  lastAnswer: ServerResponse | undefined;
  /** The raw TCP socket until the handshake ends, then the TLS socket. */
  socket: Socket | TLSSocket;
  /** `remoteAddress:remotePort`, how the TLS socket finds its raw socket's entry. */
  readonly peer: string;
  /** Closed, and out of the table. */
  gone: boolean;
}

const peerOf = (socket: Socket) => `${socket.remoteAddress}:${socket.remotePort}`;

/**
 * The open connections of one HTTPS server and their states, from the server's own events:
 * 'connection' (the raw TCP socket, before any TLS byte), 'secureConnection' (the TLS socket, with
 * the same peer), 'request' (a 'checkContinue' listener must emit it too), and the last answer's
 * `writableFinished` when asked. `pending` (handshake or headers) lists connections oldest first.
 */
export class ConnectionTable {
  private readonly pendingEntries = new Set<Entry>();
  /** Connections that have had a request: answering one, or idle since. */
  private readonly servedEntries = new Set<Entry>();
  private readonly byPeer = new Map<string, Entry>();
  private readonly byTlsSocket = new WeakMap<TLSSocket, Entry>();
  private readonly perClient = new Map<string, number>();
  private count = 0;
  private readonly clock: Clock;

  constructor(server: HttpsServer, clock: Clock) {
    this.clock = clock;
    server.on('secureConnection', (socket: TLSSocket) => this.secured(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.requested(req, res));
  }

  /** Connections in `handshake` or `headers`, oldest first. */
  get pending(): ReadonlySet<Connection> {
    return this.pendingEntries;
  }

  /** Idle keep-alive connections: every answer written, no new request since. */
  get idle(): Connection[] {
    const idle: Entry[] = [];
    for (const entry of this.servedEntries) {
      if (entry.lastAnswer?.writableFinished) {
        entry.state = 'idle';
        idle.push(entry);
      }
    }
    return idle;
  }

  get open(): number {
    return this.count;
  }

  held(client: string): number {
    return this.perClient.get(client) ?? 0;
  }

  /** A connection just accepted: in `handshake` until its TLS socket is secure. */
  accepted(socket: Socket): Connection {
    const entry: Entry = {
      client: socket.remoteAddress ?? '',
      acceptedAt: this.clock.monotonic(),
      state: 'handshake',
      lastAnswer: undefined,
      socket,
      peer: peerOf(socket),
      gone: false,
    };
    this.byPeer.set(entry.peer, entry);
    this.pendingEntries.add(entry);
    this.perClient.set(entry.client, this.held(entry.client) + 1);
    this.count++;
    socket.once('close', () => this.forget(entry));
    return entry;
  }

  /** Closes a connection; it leaves the table at once, so the count is right before its 'close'. */
  close(connection: Connection): void {
    const entry = connection as Entry;
    this.forget(entry);
    entry.socket.destroy();
  }

  private forget(entry: Entry): void {
    if (entry.gone) return;
    entry.gone = true;
    this.pendingEntries.delete(entry);
    this.servedEntries.delete(entry);
    entry.lastAnswer = undefined;
    if (this.byPeer.get(entry.peer) === entry) this.byPeer.delete(entry.peer);
    const left = this.held(entry.client) - 1;
    if (left > 0) this.perClient.set(entry.client, left);
    else this.perClient.delete(entry.client);
    this.count--;
  }

  private secured(socket: TLSSocket): void {
    const peer = peerOf(socket);
    const entry = this.byPeer.get(peer);
    if (!entry) return;
    this.byPeer.delete(peer);
    entry.state = 'headers';
    entry.socket = socket;
    this.byTlsSocket.set(socket, entry);
  }

  private requested(req: IncomingMessage, res: ServerResponse): void {
    const entry = this.byTlsSocket.get(req.socket as TLSSocket);
    if (!entry || entry.gone) return;
    entry.state = 'request';
    entry.lastAnswer = res;
    this.pendingEntries.delete(entry);
    this.servedEntries.add(entry);
  }
}
