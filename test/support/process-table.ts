import { readdirSync, readFileSync } from 'node:fs';

/** One process as /proc shows it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Clock ticks since boot when it started: with the pid, who it is (pids are reused). */
  start: string;
  name: string;
  /** `NAME=value` entries, as the process was started with them. */
  environ: string[];
}

/** /proc/PID/stat's fields after the command name (which may hold spaces and parentheses). */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** When `pid` started, or undefined once it is gone (a zombie counts as gone). */
export function startTimeOf(pid: number): string | undefined {
  const fields = statFields(pid);
  if (!fields || fields[0] === 'Z' || fields[0] === 'X') return undefined;
  return fields[19];
}

/** CPU seconds a process has used so far (user + system, all its threads), at the clock tick's grain. */
export function cpuSecondsOf(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields?.[11] ?? 0) + Number(fields?.[12] ?? 0)) / 100;
}

export function parentOf(pid: number): number {
  return Number(statFields(pid)?.[1] ?? 0);
}

export function environOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

export function commandLineOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** Every live process of the machine, by pid. */
export function processTable(): Map<number, ProcessInfo> {
  const table = new Map<number, ProcessInfo>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const fields = statFields(pid);
    const start = startTimeOf(pid);
    if (!fields || start === undefined) continue;
    table.set(pid, {
      pid,
      ppid: Number(fields[1]),
      start,
      name: commandLineOf(pid).slice(0, 2).join(' ').slice(0, 120),
      environ: environOf(pid),
    });
  }
  return table;
}
