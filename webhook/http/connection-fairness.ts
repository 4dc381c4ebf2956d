import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { type Clock, SystemClock } from '../../clock/clock.ts';
import { type Connection, ConnectionTable } from './connection-states.ts';

export interface FairnessSettings {
  /** From this many open connections on, every new one first reclaims others (see keepConnectionsFair). */
  reclaimIdleAt: number;
  /** Near the cap, a connection without complete request headers this long after its accept is closed. */
  pendingDeadlineUnderPressureMs: number;
  /** One client address holds at most this many connections; beyond, its new ones are closed at once. */
  maxConnectionsPerClient: number;
}

/** Why the fairness rule closed a connection: the label of staticsite_webhook_connections_reclaimed_total. */
export type ReclaimReason = 'idle' | 'handshake' | 'headers' | 'per-client';

export const RECLAIM_REASONS: readonly ReclaimReason[] = ['idle', 'handshake', 'headers', 'per-client'];

/**
 * Keeps the connection cap from locking clients out. Node refuses a connection at
 * `server.maxConnections` before any code of ours sees it, so room is made earlier: from
 * `reclaimIdleAt` open connections on, each new one first closes every idle keep-alive connection
 * (the API server redials), then the connections still pending (TLS handshake or request headers
 * not finished), oldest first, until fewer than `reclaimIdleAt` are open, and every pending one
 * older than `pendingDeadlineUnderPressureMs` whatever the count. The newcomer is never closed for
 * its own room, nor is a connection whose request is being answered. No one address takes more
 * than its share. Ages are measured on `clock`'s monotonic time.
 */
export function keepConnectionsFair(
  server: HttpsServer,
  settings: FairnessSettings,
  reclaimed: (reason: ReclaimReason) => void = () => {},
  clock: Clock = new SystemClock(),
): void {
  const table = new ConnectionTable(server, clock);
  const close = (connection: Connection, reason: ReclaimReason) => {
    table.close(connection);
    reclaimed(reason);
  };
  server.on('connection', (socket: Socket) => {
    if (table.held(socket.remoteAddress ?? '') >= settings.maxConnectionsPerClient) {
      socket.destroy();
      reclaimed('per-client');
      return;
    }
    const newcomer = table.accepted(socket);
    if (table.open < settings.reclaimIdleAt) return;
    for (const connection of table.idle) close(connection, 'idle');
    const staleBefore = clock.monotonic() - settings.pendingDeadlineUnderPressureMs;
    for (const connection of table.pending) {
      if (connection === newcomer) break;
      if (table.open < settings.reclaimIdleAt && connection.acceptedAt > staleBefore) break;
      close(connection, connection.state === 'handshake' ? 'handshake' : 'headers');
    }
  });
}
