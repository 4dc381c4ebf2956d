/**
 * `staticsite validate` on a large multi-document file, run as users run it (the built CLI as a
 * process): the peak resident memory of the process tree stays within five times the input.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { builtCli } from '../../devenv/webhook-process.ts';

function descendants(pid: number): number[] {
  const out = [pid];
  for (const task of readdirSync(`/proc/${pid}/task`, { withFileTypes: false }) as string[]) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    for (const child of children ? children.split(/\s+/).map(Number) : []) out.push(...descendants(child));
  }
  return out;
}

function peakKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

describe('e2e: staticsite validate keeps memory within 5x its input (the built CLI as a process)', function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'validate-memory-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a 40 MB file of 16,000 StaticSites', async () => {
    const content = `<p>${'x'.repeat(2400)}</p>`;
    const docs: string[] = [];
    for (let i = 0; i < 16_000; i++) {
      docs.push(
        `apiVersion: staticsite.dev/v1\nkind: StaticSite\nmetadata:\n  name: site-${i}\n  namespace: web\nspec:\n  content: "${content}"\n  replicas: 2\n  tier: prod\n`,
      );
    }
    const text = docs.join('---\n');
    const file = join(dir, 'sites.yaml');
    await writeFile(file, text);
    // stdout is a pipe, read as CI runners read it: a CLI that writes faster than its reader
    // without waiting would queue every result in memory.
    const child = spawn(process.execPath, [builtCli(), 'validate', '-o', 'json', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let outputBytes = 0;
    child.stdout.on('data', (c: Buffer) => {
      outputBytes += c.length;
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    let peak = 0;
    const sampler = setInterval(() => {
      try {
        for (const pid of descendants(child.pid ?? 0)) peak = Math.max(peak, peakKb(pid));
      } catch {
        // a process ended between listing and reading
      }
    }, 20);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearInterval(sampler);
    expect({ code, stderr }).to.deep.equal({ code: 0, stderr: '' });
    const inputKb = Buffer.byteLength(text) / 1024;
    process.stdout.write(`      input ${(inputKb / 1024).toFixed(0)} MB, peak RSS ${(peak / 1024).toFixed(0)} MB\n`);
    expect(peak).to.be.greaterThan(0);
    expect(outputBytes).to.be.greaterThan(text.length);
    expect(peak).to.be.below(5 * inputKb);
  });
});
