import type { TLSSocket, Server as TlsServer } from 'node:tls';

/** Why a TLS handshake failed: the label of staticsite_webhook_tls_handshake_failures_total. */
export type HandshakeFailureReason =
  | 'no-client-certificate'
  | 'bad-certificate'
  | 'timeout'
  | 'protocol'
  | 'closed'
  | 'other';

export const HANDSHAKE_FAILURE_REASONS: readonly HandshakeFailureReason[] = [
  'no-client-certificate',
  'bad-certificate',
  'timeout',
  'protocol',
  'closed',
  'other',
];

/**
 * The reason of a `tlsClientError`. A certificate from another CA is not an OpenSSL error: Node
 * verifies it after the handshake, sets `authorizationError` and closes the socket, which reports
 * ECONNRESET like a client that hung up.
 */
export function handshakeFailureReason(error: NodeJS.ErrnoException, socket: TLSSocket): HandshakeFailureReason {
  const code = error.code ?? '';
  if (socket.authorizationError) return 'bad-certificate';
  if (code === 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE') return 'no-client-certificate';
  if (code === 'ERR_TLS_HANDSHAKE_TIMEOUT') return 'timeout';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'closed';
  if (code.startsWith('ERR_SSL_') && code.includes('CERTIFICATE')) return 'bad-certificate';
  if (code.startsWith('ERR_SSL_')) return 'protocol';
  return 'other';
}

/** Reports every failed handshake on `server` with its reason. */
export function countHandshakeFailures(server: TlsServer, failed: (reason: HandshakeFailureReason) => void): void {
  server.on('tlsClientError', (error: NodeJS.ErrnoException, socket: TLSSocket) =>
    failed(handshakeFailureReason(error, socket)),
  );
}
