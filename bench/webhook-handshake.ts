/**
 * What a new connection costs the webhook: full TLS handshakes (no session resumption) against the
 * real webhook server, one after another, client and server in this process; baseline, in the same
 * run: a bare Node HTTPS server with the same key. Serving key: the RSA 2048 one the cert
 * bootstrapper issues, against an ECDSA P-256 one (test/fixtures/tls). The API
 * server keeps its webhook connections open, so this is paid when it (re)connects: after a restart,
 * an idle timeout, or a burst that needs more connections.
 * Run: npm run bench:webhook-handshake [-- handshakes]   (default 400 per key, after 50 of warm-up)
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createSecureContext, type SecureContext } from 'node:tls';
import { loopbackCerts } from '../devenv/webhook-certs.ts';
import { type Listening, startBareHttps, startLoopbackWebhook } from '../test/support/loopback-servers.ts';

const handshakes = Number(process.argv[2] ?? 400);

function handshake(port: number, secureContext: SecureContext): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, secureContext, servername: 'localhost' }, () => {
      socket.destroy();
      resolve();
    });
    socket.on('error', reject);
  });
}

const bareServer = (certDir: string) => startBareHttps(certDir, (_req, res) => res.end());

async function measure(startServer: (certDir: string) => Promise<Listening>, certDir: string, ca: string) {
  const server = await startServer(certDir);
  // One client context for all handshakes: building it per connection would cost more than the handshake.
  const client = createSecureContext({ ca });
  try {
    for (let i = 0; i < 50; i++) await handshake(server.port, client);
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < handshakes; i++) await handshake(server.port, client);
    const wallMs = performance.now() - start;
    const used = process.cpuUsage(cpu);
    return {
      handshakesPerSecond: Math.round((handshakes * 1000) / wallMs),
      cpuMillisecondsPerHandshake: +((used.user + used.system) / 1000 / handshakes).toFixed(3),
    };
  } finally {
    await server.close();
  }
}

const rsa = await loopbackCerts();
const ecdsaDir = await mkdtemp(join(tmpdir(), 'staticsite-ecdsa-'));
const fixture = (name: string) => readFileSync(new URL(`../test/fixtures/tls/${name}`, import.meta.url), 'utf8');
await writeFile(join(ecdsaDir, 'tls.crt'), fixture('ecdsa-p256.crt'));
await writeFile(join(ecdsaDir, 'tls.key'), fixture('ecdsa-p256.key'));
try {
  // The order alternates round by round (bare or webhook first, RSA or ECDSA first), so a slow
  // moment of the shared VM does not always land on the same server or key.
  const pair = async (round: number, certDir: string, ca: string) => {
    if (round % 2 === 1) {
      const bare = await measure(bareServer, certDir, ca);
      return { bare, webhook: await measure(startLoopbackWebhook, certDir, ca) };
    }
    const webhook = await measure(startLoopbackWebhook, certDir, ca);
    return { bare: await measure(bareServer, certDir, ca), webhook };
  };
  const rounds = [];
  for (let round = 1; round <= 3; round++) {
    if (round % 2 === 1) {
      const rsa2048 = await pair(round, rsa.dir, rsa.ca.certPem);
      rounds.push({ round, rsa2048, ecdsaP256: await pair(round, ecdsaDir, fixture('ecdsa-p256.crt')) });
    } else {
      const ecdsaP256 = await pair(round, ecdsaDir, fixture('ecdsa-p256.crt'));
      rounds.push({ round, rsa2048: await pair(round, rsa.dir, rsa.ca.certPem), ecdsaP256 });
    }
  }
  console.log(
    JSON.stringify(
      { machine: `${cpus().length} x ${cpus()[0]?.model}, Node ${process.version}`, handshakes, rounds },
      null,
      2,
    ),
  );
} finally {
  await rm(rsa.dir, { recursive: true, force: true });
  await rm(ecdsaDir, { recursive: true, force: true });
}
