/**
 * The coverage-guided loop the fuzzers share: run the seeds, then mutate corpus entries, run each
 * against the target, keep an input when V8's block coverage shows something that never ran before,
 * and write every problem a run shows as a replayable finding. What a target is, how an input runs
 * and how it mutates belong to each fuzzer (webhook-fuzzer.ts, validate-fuzzer.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CoverageClient } from './inspector.ts';
import { random } from './mutations.ts';

/** One input: where it goes (a webhook path, or the CLI command line it runs with) and its bytes. */
export interface FuzzCase {
  path: string;
  body: string;
}

export type FindingKind =
  | 'crash'
  | 'no-answer'
  | 'slow'
  | 'http-5xx'
  | 'deadline'
  | 'memory'
  | 'wrong-uid'
  | 'unexpected-error'
  | 'bad-report';

export interface Problem {
  kind: FindingKind;
  detail: string;
}

export interface Finding extends FuzzCase, Problem {}

export interface FuzzOptions {
  seed: number;
  seconds: number;
  /** Where findings are written (one JSON file each); none: kept in the report only. */
  findingsDir?: string;
  /** Told of progress about every 10 s. */
  progress?: (line: string) => void;
}

export interface FuzzReport {
  seed: number;
  /** How many inputs the corpus started with. */
  seeds: number;
  seconds: number;
  executions: number;
  executionsPerSecond: number;
  corpus: number;
  features: number;
  statuses: Record<string, number>;
  findings: Finding[];
}

/** A process under test with a coverage session on it. */
export interface FuzzTarget {
  readonly coverage: CoverageClient;
  stop(): Promise<void>;
}

/** What one run showed: a status to count, its problems, and whether the target is lost (dead or hung). */
export interface RunResult {
  status: string;
  problems: Problem[];
  lost?: boolean;
}

export interface Fuzzable<T extends FuzzTarget> {
  seeds: FuzzCase[];
  /** The largest input worth sending; larger mutants are dropped. */
  maxBytes: number;
  start(): Promise<T>;
  run(target: T, input: FuzzCase): Promise<RunResult>;
  /** A new input from `from`, `donor` (another corpus entry) lending pieces. */
  mutate(rand: () => number, from: FuzzCase, donor: FuzzCase): FuzzCase;
}

export async function fuzz<T extends FuzzTarget>(options: FuzzOptions, subject: Fuzzable<T>): Promise<FuzzReport> {
  const rand = random(options.seed);
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(rand() * xs.length)] as X;
  const corpus = [...subject.seeds];
  const seen = new Set<string>();
  const statuses: Record<string, number> = {};
  const findings: Finding[] = [];
  if (options.findingsDir) await mkdir(options.findingsDir, { recursive: true });
  let target = await subject.start();
  let executions = 0;
  const started = Date.now();
  let lastProgress = started;

  const found = async (input: FuzzCase, problem: Problem) => {
    findings.push({ ...input, ...problem });
    if (options.findingsDir) {
      const file = join(options.findingsDir, `${problem.kind}-${options.seed}-${executions}.json`);
      await writeFile(file, `${JSON.stringify({ kind: problem.kind, path: input.path, body: input.body })}\n`);
    }
  };

  const execute = async (input: FuzzCase): Promise<boolean> => {
    executions++;
    const result = await subject.run(target, input);
    statuses[result.status] = (statuses[result.status] ?? 0) + 1;
    for (const problem of result.problems) await found(input, problem);
    if (result.lost) {
      await target.stop();
      target = await subject.start();
      return false;
    }
    let fresh = false;
    for (const feature of await target.coverage.take()) {
      if (seen.has(feature)) continue;
      seen.add(feature);
      fresh = true;
    }
    return fresh;
  };

  try {
    for (const seedCase of subject.seeds) await execute(seedCase);
    while (Date.now() - started < options.seconds * 1000) {
      // Newer entries are the frontier: half the picks come from the last quarter of the corpus.
      const from = rand() < 0.5 ? pick(corpus.slice(Math.floor((corpus.length * 3) / 4))) : pick(corpus);
      const input = subject.mutate(rand, from, pick(corpus));
      if (input.body.length > subject.maxBytes) continue;
      if (await execute(input)) corpus.push(input);
      if (options.progress && Date.now() - lastProgress > 10_000) {
        lastProgress = Date.now();
        options.progress(
          `${((Date.now() - started) / 1000).toFixed(0)} s: ${executions} runs, corpus ${corpus.length}, ${seen.size} features, ${findings.length} findings`,
        );
      }
    }
  } finally {
    await target.stop();
  }
  const seconds = (Date.now() - started) / 1000;
  return {
    seed: options.seed,
    seeds: subject.seeds.length,
    seconds,
    executions,
    executionsPerSecond: executions / seconds,
    corpus: corpus.length,
    features: seen.size,
    statuses,
    findings,
  };
}
