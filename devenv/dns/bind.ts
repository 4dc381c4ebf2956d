import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DnsClient } from '../../controller/records/dns/client.ts';
import { freePort } from '../ports.ts';

const run = promisify(execFile);

export interface BindOptions {
  zone?: string;
  keyName?: string;
  /** Keep this port across restarts (the DNS-down drill); default a free one. */
  port?: number;
  /** BIND's transfer-message-size (bytes, 512 and up): small splits a zone transfer into many messages. */
  transferMessageSize?: number;
  /**
   * Also listen on this address (one pods reach, such as the node's), answering queries from
   * anywhere; updates and transfers still need the key.
   */
  listenAddress?: string;
}

/**
 * An authoritative BIND 9 (Debian's `named`) on 127.0.0.1 for tests and local runs: one primary zone
 * that accepts updates and transfers signed with a TSIG key made here (HMAC-SHA256), everything in a
 * temp dir, in the foreground. Stop and start keep the zone (its journal).
 */
export class BindServer {
  readonly zone: string;
  readonly keyName: string;
  secret = randomBytes(32);
  port = 0;
  dir = '';
  private child: ChildProcess | undefined;
  private log = '';
  private readonly requestedPort: number | undefined;
  readonly transferMessageSize: number | undefined;
  readonly listenAddress: string | undefined;

  constructor(options: BindOptions = {}) {
    this.zone = options.zone ?? 'sites.staticsite.dev';
    this.keyName = options.keyName ?? 'staticsite-controller';
    this.requestedPort = options.port;
    this.transferMessageSize = options.transferMessageSize;
    this.listenAddress = options.listenAddress;
  }

  get keyFile(): string {
    return join(this.dir, 'tsig.key');
  }

  async start(): Promise<this> {
    if (!this.dir) {
      this.dir = await mkdtemp(join(tmpdir(), 'staticsite-bind-'));
      this.port = this.requestedPort ?? (await freePort());
      await writeBindConfig(this.dir, this);
    }
    const named = await which('named');
    this.log = '';
    this.child = spawn(named, ['-g', '-c', join(this.dir, 'named.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.log = (this.log + chunk.toString()).slice(-8000);
    });
    await this.waitUntilServing(20_000);
    return this;
  }

  /**
   * Ready is the zone answering: a signed SOA query gets NOERROR. An open port, or named logging
   * "running", comes before the zone is loaded, and a query then gets SERVFAIL.
   */
  private async waitUntilServing(timeoutMs: number): Promise<void> {
    const client = new DnsClient({
      server: { host: '127.0.0.1', port: this.port },
      key: { name: this.keyName, secret: this.secret },
      timeoutMs: 500,
    });
    const started = Date.now();
    let last = 'no answer yet';
    for (;;) {
      if (this.child?.exitCode !== null) throw new Error(`named exited: ${this.log}`);
      try {
        await client.serial(this.zone);
        return;
      } catch (error) {
        last = (error as Error).message;
      }
      if (Date.now() - started > timeoutMs) {
        throw new Error(`named: zone ${this.zone} not serving within ${timeoutMs} ms (${last}): ${this.log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * A new secret under the same key name, as a rotated Secret would bring: the key file replaced at
   * once (a rename, as the kubelet swaps a Secret volume's files), then named restarted to load it.
   */
  async rotateKey(): Promise<void> {
    this.secret = randomBytes(32);
    const next = `${this.keyFile}.next`;
    await writeFile(next, keyFileText(this.keyName, this.secret), { mode: 0o644 });
    await rename(next, this.keyFile);
    await this.stop();
    await this.start();
  }

  /** Stops named; the zone and its journal stay for the next start. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  async dispose(): Promise<void> {
    await this.stop();
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  /**
   * Adds (or deletes) records with Debian's `nsupdate`, signed with the zone's key: another writer than
   * ours, as an administrator or another tool sharing the zone would be. Each line is `NAME TTL TYPE
   * DATA` to add, `NAME [TYPE [DATA]]` to delete.
   */
  async nsupdate(records: string[], action: 'add' | 'delete' = 'add'): Promise<void> {
    const script = [`server 127.0.0.1 ${this.port}`, ...records.map((r) => `update ${action} ${r}`), 'send', ''].join(
      '\n',
    );
    const child = spawn(
      await which('nsupdate'),
      ['-y', `hmac-sha256:${this.keyName}:${this.secret.toString('base64')}`],
      {
        stdio: ['pipe', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdin?.end(script);
    const code = await new Promise((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`nsupdate exited ${code}: ${stderr}`);
  }

  /** `dig +short` for one name and type, as a user would query the server. */
  async dig(name: string, type: 'A' | 'AAAA' | 'CNAME' | 'TXT' | 'ANY', server = '127.0.0.1'): Promise<string[]> {
    const { stdout } = await run(await which('dig'), [
      `@${server}`,
      '-p',
      String(this.port),
      '+short',
      '+norecurse',
      name,
      type,
    ]);
    return stdout.split('\n').filter((line) => line.trim() !== '');
  }

  /** How a signed zone transfer arrives, as dig counts it: its records and the messages they came in. */
  async transferSize(): Promise<{ records: number; messages: number; bytes: number }> {
    const { stdout } = await run(await which('dig'), [
      '@127.0.0.1',
      '-p',
      String(this.port),
      '-y',
      `hmac-sha256:${this.keyName}:${this.secret.toString('base64')}`,
      this.zone,
      'AXFR',
    ]);
    const size = /XFR size: (\d+) records \(messages (\d+), bytes (\d+)\)/.exec(stdout);
    if (!size) throw new Error(`dig AXFR ${this.zone} printed no transfer size:\n${stdout}`);
    return { records: Number(size[1]), messages: Number(size[2]), bytes: Number(size[3]) };
  }
}

export interface BindConfig {
  zone: string;
  keyName: string;
  secret: Buffer;
  port: number;
  transferMessageSize?: number;
  listenAddress?: string;
}

/** A key file as `tsig-keygen -a hmac-sha256 NAME` writes it. */
function keyFileText(keyName: string, secret: Buffer): string {
  return `key "${keyName}" {\n\talgorithm hmac-sha256;\n\tsecret "${secret.toString('base64')}";\n};\n`;
}

/**
 * named.conf, the zone and the TSIG key (BIND's format, as `tsig-keygen` writes it and
 * `--dns-tsig-key-file` reads it) in `dir`, with absolute paths into it: a primary zone on
 * 127.0.0.1:PORT that takes updates and transfers signed with the key. `staticsite local` and docker
 * compose (`local dns-config`) run named on these files.
 */
export async function writeBindConfig(dir: string, config: BindConfig): Promise<void> {
  const { zone, keyName, secret, port, transferMessageSize, listenAddress } = config;
  const listen = listenAddress ? `127.0.0.1; ${listenAddress};` : '127.0.0.1;';
  const keyFile = join(dir, 'tsig.key');
  await writeFile(keyFile, keyFileText(keyName, secret), { mode: 0o644 });
  await writeFile(
    join(dir, 'zone.db'),
    `$TTL 300\n@ IN SOA ns1.${zone}. hostmaster.${zone}. ( 1 3600 600 86400 60 )\n@ IN NS ns1.${zone}.\nns1 IN A 127.0.0.1\n`,
  );
  await writeFile(
    join(dir, 'named.conf'),
    [
      `include "${keyFile}";`,
      'options {',
      `  directory "${dir}"; pid-file "${join(dir, 'named.pid')}";`,
      `  session-keyfile "${join(dir, 'session.key')}"; managed-keys-directory "${dir}";`,
      `  listen-on port ${port} { ${listen} }; listen-on-v6 { none; };`,
      `  recursion no; dnssec-validation no; notify no; allow-query { ${listenAddress ? 'any' : '127.0.0.1'}; };`,
      ...(transferMessageSize ? [`  transfer-message-size ${transferMessageSize};`] : []),
      '};',
      'controls { };',
      `zone "${zone}" { type primary; file "${join(dir, 'zone.db')}";`,
      `  allow-update { key "${keyName}"; }; allow-transfer { key "${keyName}"; }; };`,
      '',
    ].join('\n'),
  );
}

async function which(command: string): Promise<string> {
  for (const dir of ['/usr/sbin', '/usr/bin', '/sbin', '/bin']) {
    try {
      await access(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {}
  }
  throw new Error(`${command} is missing: apt-get install bind9 bind9-dnsutils (Debian's BIND 9, dig and nsupdate)`);
}
