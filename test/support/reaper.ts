/**
 * The reaper of one test run (started by run-guard.ts, detached, in a session of its own): it waits
 * for the run to end, however it ends (a normal end, a failure, SIGINT or SIGTERM to the runner
 * alone, SIGKILL of `npm test`), then ends every process the run started and runs the cleanups the
 * suites registered (containers, which are dockerd's processes, not the run's).
 *
 * The run has ended when the stdin pipe from the runner closes or when any process of the watched
 * chain (the runner, the npm script processes above it, `npm` itself) is gone. The run's processes
 * are those whose environment carries the run's marker, which every child of the runner inherits,
 * everything below them (pod processes under a containerd shim get an environment of their own),
 * and the chain's processes below the one that is gone (`npm test` killed: its script goes on).
 *
 * Usage: node reaper.ts MARKER_NAME RUN_ID RUN_DIR PID... (the chain, the runner first).
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ProcessInfo, processTable, startTimeOf } from './process-table.ts';
import { readCleanups, runCleanup } from './run-guard.ts';

const [marker = '', runId = '', runDir = '', ...chainArgs] = process.argv.slice(2);
if (!marker || !runId || !runDir || chainArgs.length === 0) {
  process.stderr.write('usage: reaper.ts MARKER_NAME RUN_ID RUN_DIR PID...\n');
  process.exit(2);
}
const log = (line: string) => appendFileSync(join(runDir, 'reaper.log'), `${new Date().toISOString()} ${line}\n`);
const chain = chainArgs.map((pid) => ({ pid: Number(pid), start: startTimeOf(Number(pid)) }));
const isAlive = (p: { pid: number; start: string | undefined }) =>
  p.start !== undefined && startTimeOf(p.pid) === p.start;
const describe = (list: ProcessInfo[]) => list.map((p) => `${p.pid} ${p.name}`).join(', ');

/** Resolves with the index of the first chain member gone (0 when the runner's pipe closed). */
async function runEnded(): Promise<number> {
  let pipeClosed = false;
  const closed = () => {
    pipeClosed = true;
  };
  process.stdin.on('end', closed).on('close', closed).on('error', closed).resume();
  for (;;) {
    const gone = chain.findIndex((member) => !isAlive(member));
    if (gone >= 0) return gone;
    if (pipeClosed) return 0;
    await sleep(200);
  }
}

function runProcesses(gone: number): ProcessInfo[] {
  const table = processTable();
  const ours = new Set<number>();
  const prefix = `${marker}=`;
  const marked = (p: ProcessInfo) =>
    p.environ.some((entry) => entry.startsWith(prefix) && entry.slice(prefix.length).split(',').includes(runId));
  for (const p of table.values()) if (marked(p)) ours.add(p.pid);
  for (const member of chain.slice(0, gone)) if (isAlive(member)) ours.add(member.pid);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table.values()) {
      if (!ours.has(p.pid) && ours.has(p.ppid)) {
        ours.add(p.pid);
        grew = true;
      }
    }
  }
  ours.delete(process.pid);
  return [...ours].flatMap((pid) => table.get(pid) ?? []);
}

function signal(list: ProcessInfo[], name: NodeJS.Signals): void {
  for (const p of list) {
    if (startTimeOf(p.pid) !== p.start) continue;
    try {
      process.kill(p.pid, name);
    } catch {}
  }
}

const gone = await runEnded();
const left = runProcesses(gone);
log(
  `the run ended (chain member ${gone} gone); ${left.length} process(es) left${left.length ? `: ${describe(left)}` : ''}`,
);
signal(left, 'SIGTERM');
const stillThere = () => left.filter((p) => startTimeOf(p.pid) === p.start);
for (let waited = 0; waited < 4_000 && stillThere().length > 0; waited += 100) await sleep(100);
if (stillThere().length > 0) {
  log(`SIGKILL after 4 s: ${describe(stillThere())}`);
  signal(stillThere(), 'SIGKILL');
}
for (const cleanup of readCleanups(runDir)) log(`cleanup ${cleanup.join(' ')}: ${await runCleanup(cleanup, 30_000)}`);
process.exit(0);
