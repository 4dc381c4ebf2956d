/**
 * A review worker: decides review bodies with the schema engine, one at a time, in a thread of its
 * own with a heap of its own, so no single review can exhaust the server's heap or hold its event
 * loop (webhook/isolation/review-pool.ts starts, watches and replaces these).
 */
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { decide, siteDecisions } from '../review/pipeline.ts';
import type { FromWorker, ReviewWorkerData, ToWorker } from './protocol.ts';

const port = parentPort;
if (port === null) throw new Error('review-worker.ts runs as a worker thread of the webhook');
const { baseDomain, limits } = workerData as ReviewWorkerData;
const decisions = siteDecisions({ baseDomain });
const post = (message: FromWorker) => port.postMessage(message);

port.on('message', (message: ToWorker) => {
  if (typeof message?.id !== 'number' || !(message.body instanceof ArrayBuffer)) return; // not a review
  const { id, path, contentType, body } = message;
  const task = { path, contentType, body: Buffer.from(body) };
  const decided = decide(decisions, task, { limits, decoded: (envelope) => post({ type: 'parsed', id, envelope }) });
  post({ type: 'decided', id, decided });
});
post({ type: 'ready', heapLimitMb: getHeapStatistics().heap_size_limit / 2 ** 20 });
