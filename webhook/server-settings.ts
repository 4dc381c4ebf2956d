/**
 * The webhook server's settings that decide safety, with their one default each. Nothing else sets
 * them; test/unit/webhook-hardening.test.ts asserts the shipped values on a running server.
 */
import { DEFAULT_MAX_BODY_BYTES } from './http/review-endpoint.ts';
import type { ReviewPoolSettings } from './isolation/review-pool.ts';
import type { InThreadBounds } from './review/pipeline.ts';

/** Where reviews are decided: small ones in the main thread, the rest in the review workers. */
export interface ReviewIsolationSettings extends ReviewPoolSettings {
  /** A review within all three bounds is decided in the main thread; 0 bytes: every review in a worker. */
  inThread: InThreadBounds;
}

/**
 * TLS 1.2 only with forward secrecy and AEAD (Mozilla's "intermediate" profile, ECDHE suites), and
 * the three TLS 1.3 suites. Node's https server speaks HTTP/1.1 only: no HTTP/2 (CVE-2023-44487).
 */
export const TLS_SETTINGS = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
  honorCipherOrder: true,
} as const;

/**
 * Connection limits. The API server gives a webhook call at most 30 s (10 s by default; our
 * configurations say 5 s), so nothing a caller legitimately sends takes longer than 10 s to arrive.
 */
export const CONNECTION_SETTINGS = {
  /** A TCP connection that has not completed its TLS handshake by then is closed (Node: 120 s). */
  handshakeTimeoutMs: 10_000,
  /** Request headers must arrive within this (Node: 60 s). */
  headersTimeoutMs: 10_000,
  /** The whole request, body included, must arrive within this (Node: 300 s). */
  requestTimeoutMs: 10_000,
  /** How often Node checks the two timeouts above (Node: 30 s, which would stretch them to 40 s). */
  timeoutCheckIntervalMs: 1_000,
  /** Idle keep-alive connections, longer than the API server's idle timeout so it closes first. */
  keepAliveTimeoutMs: 65_000,
  /** Connections beyond this are refused at accept. */
  maxConnections: 512,
  /**
   * From this many on, a new connection first closes the idle keep-alive ones (the API server
   * redials), then pending ones (TLS handshake or request headers unfinished), oldest first, until
   * fewer than this are open (webhook/http/connection-fairness.ts). It must be under
   * maxConnections: Node refuses at the cap before our code sees a connection, so the 64 between
   * are the room a newcomer always finds. Freeing no more than that keeps a newcomer safe the
   * longest: it is closed only after 447 newer connections (bench/RESULTS.md, #51).
   */
  reclaimIdleAt: 448,
  /**
   * From reclaimIdleAt on, a connection that has not delivered complete request headers within this
   * of its accept is closed at the next new connection, however many are open: the API server's
   * handshake and headers take milliseconds (a round trip or two and a signature), so a second is
   * ample on any cluster network and a busy event loop, while a flood must renew every pending
   * connection each second to hold them. Below reclaimIdleAt, handshakeTimeoutMs and
   * headersTimeoutMs apply as they are.
   */
  pendingDeadlineUnderPressureMs: 1_000,
  /** One client address holds at most this many; the rest of the cap stays open to everyone else. */
  maxConnectionsPerClient: 384,
  /** Bodies beyond this are refused with 413 and the connection closed at the limit. */
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
  /**
   * After SIGTERM, how long the webhook keeps serving (not ready, `Connection: close` on every
   * answer) before it stops accepting: the time for its endpoint to leave the Service and for
   * the API server to drop the connections it holds to this pod. Without it a rollout or a
   * deleted pod fails the reviews that reach it in that window (docs/webhook-shutdown.md).
   */
  shutdownDelayMs: 5_000,
} as const;

/**
 * Reviews within small bounds are decided where they land, in the main thread: their work is
 * bounded by their size (5 ms for the most expensive hostile shape at these bounds, bench/in-thread-bound.ts,
 * docs/webhook-isolation.md), and every review the API server sends for a StaticSite fits. Any other
 * review goes to a worker thread (webhook/isolation/review-pool.ts): two, so one review that runs
 * into a limit leaves the other answering while its worker is replaced. One starts with the process
 * to prove that the worker loads (one that cannot fails the start) and stops once it has; a worker
 * starts, in about 0.3 s, when a large review comes, and stops after 10 s without one (an idle
 * worker held 12-16 MB of the process's RSS, bench/RESULTS.md). Deadlines stay well inside
 * the 5 s our webhook configurations give a call; the heap fits two maximum-size reviews at once in
 * the manifest's memory limit (test/e2e/webhook-memory.test.ts).
 */
export const REVIEW_ISOLATION: ReviewIsolationSettings = {
  inThread: { maxBytes: 64 * 1024, maxValues: 2_000, maxDepth: 32 },
  workers: 2,
  deadlineMs: 2_000,
  queueTimeoutMs: 2_000,
  idleMs: 10_000,
  initialWorkers: 1,
  retireInitialWorkers: true,
  resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 },
};
