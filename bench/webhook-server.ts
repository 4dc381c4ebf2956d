/**
 * One server process for bench/webhook.bench.ts: `--mode webhook` is the real webhook with its
 * unique-hostname rule on (an in-memory index holding 1,000 other sites, as the watch-backed cache
 * would), `--mode bare` a bare Node HTTPS server answering a fixed JSON: the ceiling for comparison.
 * Prints `listening <port>` when ready (the webhook adds `metrics <port>`).
 */
import { parseArgs } from 'node:util';
import { startBareHttps, startLoopbackWebhook } from '../test/support/loopback-servers.ts';
import { MemoryHostnameIndex } from '../webhook/admission/hostname-index.ts';

const { values } = parseArgs({
  options: { mode: { type: 'string' }, 'cert-dir': { type: 'string' } },
  strict: true,
});
const certDir = values['cert-dir'] ?? '';
if (values.mode === 'webhook') {
  const index = new MemoryHostnameIndex();
  for (let i = 0; i < 1000; i++) index.set({ namespace: 'web', name: `site-${i}` }, `site-${i}.web.sites.test`);
  index.synced = true;
  const webhook = await startLoopbackWebhook(certDir, {
    hostnames: { index, start: async () => {}, stop: async () => {} },
  });
  process.stdout.write(`listening ${webhook.port} metrics ${webhook.metricsPort}\n`);
  process.on('SIGTERM', () => void webhook.close().then(() => process.exit(0)));
} else {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: 'x', allowed: true },
  });
  const server = await startBareHttps(certDir, (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  });
  process.stdout.write(`listening ${server.port}\n`);
  process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
}
