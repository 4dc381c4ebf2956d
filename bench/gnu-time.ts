/** One process measured by GNU time, and the statistics the benches report. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Measured {
  wall: number;
  /** User + system seconds. */
  cpu: number;
  rssMb: number;
  stdout: string;
  status: number | null;
}

/** Wall seconds, CPU seconds (user + system) and peak RSS of one run; `dir` holds GNU time's report. */
export function measure(argv: string[], dir: string): Measured {
  const timeFile = join(dir, 'time.txt');
  const r = spawnSync('/usr/bin/time', ['-o', timeFile, '-f', '%e %U %S %M', ...argv], {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
  if (r.error) throw r.error;
  // GNU time puts "Command exited with non-zero status N" first when the tool fails (invalid objects).
  const lastLine = readFileSync(timeFile, 'utf8').trim().split('\n').pop() ?? '';
  const [wall, user, system, rss] = lastLine.split(/\s+/).map(Number);
  return {
    wall: wall ?? 0,
    cpu: (user ?? 0) + (system ?? 0),
    rssMb: Math.round((rss ?? 0) / 1024),
    stdout: r.stdout,
    status: r.status,
  };
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
export const spread = (values: number[]) => `${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)}`;
