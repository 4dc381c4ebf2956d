/**
 * Every process a test run starts ends with the run, however it ends: the real runner (mocha with the
 * project's root hooks, alone as an IDE runs it, or under `npm test`) runs a suite that starts
 * processes of every kind and then hangs; the runner or npm is killed; 10 s later none is left.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { freePort } from '../../devenv/ports.ts';
import { builtCli } from '../../devenv/webhook-process.ts';
import { PARENT_PID_VARIABLE } from '../../process/parent-watch.ts';
import { startTimeOf } from '../support/process-table.ts';

const root = new URL('../../', import.meta.url).pathname;
const mocha = join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');
const runnerArgs = [
  mocha,
  '--no-config',
  '--no-package',
  '--require',
  join(root, 'test', 'support', 'root-hooks.ts'),
  '--extension',
  'ts',
  '--timeout',
  '0',
  join(root, 'test', 'fixtures', 'run-guard', 'hang.spec.ts'),
];

/** This environment without npm's script variables: the nested run is a user's, not part of ours. */
function userEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('npm_')) env[key] = value;
  return { ...env, ...extra };
}

interface Started {
  child: ChildProcess;
  pids: number[];
  runDir: string;
  file: string;
}

/** Starts the runner (through `npm test` with `viaNpm`) and waits for the suite's processes. */
async function startRun(options: { viaNpm?: boolean; controlPlane?: boolean; end?: 'leak' }): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'staticsite-run-guard-'));
  const file = join(dir, 'pids.json');
  const env = userEnvironment({
    RUN_GUARD_PIDS: file,
    ...(options.controlPlane ? { RUN_GUARD_CONTROL_PLANE: '1' } : {}),
    ...(options.end ? { RUN_GUARD_END: options.end } : {}),
  });
  let child: ChildProcess;
  if (options.viaNpm) {
    const script = [process.execPath, ...runnerArgs].map((arg) => `'${arg}'`).join(' ');
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'run-guard', private: true, scripts: { test: script } }),
    );
    // A process group of its own, as a terminal gives a command (so Ctrl-C can be sent to it alone).
    child = spawn('npm', ['test', '--silent'], { cwd: dir, env, stdio: 'ignore', detached: true });
  } else {
    child = spawn(process.execPath, runnerArgs, { cwd: root, env, stdio: 'ignore' });
  }
  const deadline = Date.now() + 120_000;
  while (!existsSync(file)) {
    if (child.exitCode !== null && !options.end) throw new Error(`the runner exited ${child.exitCode} early`);
    if (Date.now() > deadline) throw new Error('the suite did not start its processes within 120 s');
    await sleep(100);
  }
  await sleep(100); // the file is written whole by one call; give the writer its turn
  const { pids, runDir } = JSON.parse(readFileSync(file, 'utf8')) as { pids: number[]; runDir: string };
  return { child, pids, runDir, file };
}

/** The processes of `pids` still alive after `ms`, polled (a process that is gone is never counted). */
async function aliveAfter(pids: number[], ms: number): Promise<number[]> {
  const starts = new Map(pids.map((pid) => [pid, startTimeOf(pid)]));
  const alive = () => pids.filter((pid) => starts.get(pid) !== undefined && startTimeOf(pid) === starts.get(pid));
  for (const deadline = Date.now() + ms; Date.now() < deadline && alive().length > 0; ) await sleep(200);
  return alive();
}

function describeAlive(pids: number[]): string {
  return pids.map((pid) => `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`).join('\n');
}

describe('e2e: a test run ends every process it started, however it ends', function () {
  this.timeout(180_000);
  const runs: Started[] = [];
  afterEach(() => {
    // Whatever a failed case left: this run's own reaper ends it too, but not before the run ends.
    for (const run of runs.splice(0)) {
      for (const pid of [run.child.pid ?? 0, ...run.pids]) {
        try {
          if (pid > 0) process.kill(pid, 'SIGKILL');
        } catch {}
      }
      rmSync(run.file, { force: true });
    }
  });

  async function expectAllGone(run: Started, within = 10_000) {
    const deadline = Date.now() + within;
    const left = await aliveAfter([run.child.pid ?? 0, ...run.pids], within);
    expect(left, describeAlive(left)).to.deep.equal([]);
    while (!existsSync(`${run.file}.cleaned`) && Date.now() < deadline) await sleep(100);
    expect(existsSync(`${run.file}.cleaned`), 'the registered cleanup ran').to.equal(true);
  }

  it('SIGINT to the runner alone (an IDE stop button), with a control plane running', async () => {
    const run = await startRun({ controlPlane: true });
    runs.push(run);
    expect(run.pids.length).to.equal(7);
    run.child.kill('SIGINT');
    await expectAllGone(run);
  });

  it('SIGKILL to the runner', async () => {
    const run = await startRun({});
    runs.push(run);
    run.child.kill('SIGKILL');
    await expectAllGone(run);
  });

  it('SIGKILL to npm test: its script shell and the runner end too', async () => {
    const run = await startRun({ viaNpm: true });
    runs.push(run);
    run.child.kill('SIGKILL');
    await expectAllGone(run);
  });

  it('Ctrl-C on npm test (SIGINT to its process group, as a terminal sends it)', async () => {
    const run = await startRun({ viaNpm: true });
    runs.push(run);
    process.kill(-(run.child.pid ?? 0), 'SIGINT');
    await expectAllGone(run);
  });

  it('SIGTERM to the runner alone', async () => {
    const run = await startRun({});
    runs.push(run);
    run.child.kill('SIGTERM');
    await expectAllGone(run);
  });

  it('a normal end: what the suite left running is ended, and the reaper names it', async () => {
    const run = await startRun({ end: 'leak' });
    runs.push(run);
    await expectAllGone(run, 15_000);
    const log = readFileSync(join(run.runDir, 'reaper.log'), 'utf8');
    for (const command of ['sleep 1000', 'sleep 1001', 'sleep 1002']) expect(log).to.include(command);
  });
});

describe('e2e: the built CLI, started by the dev environment, ends when its parent is gone', function () {
  this.timeout(60_000);

  it('staticsite controller, retrying an API server that is not there, exits once its parent is SIGKILLed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'staticsite-parent-watch-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'gone', cluster: { server: 'https://127.0.0.1:9', 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'c', context: { cluster: 'gone', user: 'u' } }],
        'current-context': 'c',
      }),
    );
    const cli = [
      process.execPath,
      builtCli(),
      'controller',
      `--kubeconfig=${kubeconfig}`,
      `--metrics-port=${await freePort()}`,
    ];
    // The parent as ManagedProcess is one: it names itself in the variable.
    const parent = spawn('sh', ['-c', `${PARENT_PID_VARIABLE}=$$ "$0" "$@" & echo $!; wait`, ...cli], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const controllerPid = Number(
      await new Promise<string>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(String(d)))),
    );
    await sleep(2_000);
    expect(startTimeOf(controllerPid), 'the controller runs while its parent does').to.not.equal(undefined);
    parent.kill('SIGKILL');
    expect(await aliveAfter([controllerPid], 5_000)).to.deep.equal([]);
    rmSync(dir, { recursive: true, force: true });
  });
});
