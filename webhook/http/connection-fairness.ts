import type { Server } from 'node:net';

export interface FairnessSettings {
  /** From this many open connections on, every new one first closes the idle keep-alive connections. */
  reclaimIdleAt: number;
  /** One client address holds at most this many connections; beyond, its new ones are closed at once. */
  maxConnectionsPerClient: number;
}

/**
 * Keeps the connection cap from locking clients out: near the cap, idle keep-alive connections are
 * reclaimed (a client that sent one review and went silent holds nothing another needs; the API
 * server redials), and no one address takes more than its share. `server.maxConnections` stays the
 * hard limit; connections mid-request are bounded by the request timeouts, not closed here.
 */
export function keepConnectionsFair(
  server: Server & { closeIdleConnections(): void },
  settings: FairnessSettings,
): void {
  const perClient = new Map<string, number>();
  let open = 0;
  server.on('connection', (socket) => {
    const client = socket.remoteAddress ?? '';
    const held = perClient.get(client) ?? 0;
    if (held >= settings.maxConnectionsPerClient) {
      socket.destroy();
      return;
    }
    perClient.set(client, held + 1);
    open++;
    socket.once('close', () => {
      open--;
      const left = (perClient.get(client) ?? 1) - 1;
      if (left > 0) perClient.set(client, left);
      else perClient.delete(client);
    });
    if (open >= settings.reclaimIdleAt) server.closeIdleConnections();
  });
}
