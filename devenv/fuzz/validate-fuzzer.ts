/**
 * A coverage-guided fuzzer for `staticsite validate`: the shipped CLI bundle's `run`, with the
 * command's own argv, in one long-lived process under its inspector (validate-host.ts) and under a
 * heap limit; every input is a YAML or JSON stream mutated from the corpus, given as standard input.
 *
 * A finding is a run that shows an input got the better of the command: the process died (its heap)
 * or stopped answering, a run over 5 s, an exit code other than 0, 1 or 2, an error that is not about
 * the input (the CLI's catch-all: exit 1 with a message), or `-o json` output that is not JSON.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dump, loadAll } from 'js-yaml';
import { packageFile, packageRoot } from '../../cli/package-root.ts';
import { freePort } from '../ports.ts';
import { bundleDictionary, corpusWords, seedAdmissionFiles, seedStreams } from './corpus.ts';
import { type FuzzCase, type FuzzOptions, type FuzzReport, fuzz, type Problem } from './fuzz-loop.ts';
import { CoverageClient } from './inspector.ts';
import { type Json, mutateJson, mutateText } from './mutations.ts';

/** The CRD the command validates against, given as `--crd`. */
export const FUZZ_CRD = packageFile('manifests', 'crds', 'full', 'crd.yaml');
/** The heap the command runs under: a CI runner's Node as small as a container's. */
export const VALIDATE_HEAP_MB = 256;
const SLOW_MS = 5_000;
const NO_ANSWER_MS = 15_000;
const MAX_BYTES = 6 * 1024 * 1024;
const FORMATS = ['text', 'json', 'junit', 'tap'] as const;
const FIELD_VALIDATIONS = ['Strict', 'Warn', 'Ignore'] as const;

/**
 * A case's path is the command line without the CRD and the `-` for standard input, as a user would
 * type it: `validate -o json --field-validation Warn`.
 */
export function argsOf(path: string): string[] {
  return ['--crd', FUZZ_CRD, ...path.split(' ').slice(1), '-'];
}

function pathFor(format: string, fieldValidation: string): string {
  return `validate -o ${format} --field-validation ${fieldValidation}`;
}

interface Answer {
  id: number;
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The host process (validate-host.ts) under its inspector and heap limit. */
class ValidateTarget {
  private readonly child: ChildProcess;
  readonly coverage: CoverageClient;
  private nextId = 1;
  private readonly waiting = new Map<number, (answer: Answer | Error) => void>();

  private constructor(child: ChildProcess, coverage: CoverageClient) {
    this.child = child;
    this.coverage = coverage;
    child.on('message', (message: Answer) => {
      this.waiting.get(message.id)?.(message);
      this.waiting.delete(message.id);
    });
    child.on('exit', (code, signal) => {
      for (const settle of this.waiting.values()) settle(new Error(`the process exited (${signal ?? code})`));
      this.waiting.clear();
    });
  }

  static async start(): Promise<ValidateTarget> {
    const inspectPort = await freePort();
    const child = fork(join(packageRoot(), 'devenv', 'fuzz', 'validate-host.ts'), [], {
      execArgv: [`--inspect=127.0.0.1:${inspectPort}`, `--max-old-space-size=${VALIDATE_HEAP_MB}`],
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`the validate host exited (${code}) before it was ready`)));
    });
    const coverage = await CoverageClient.attach(inspectPort, (script) => script.includes('/dist/bin/'));
    return new ValidateTarget(child, coverage);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  run(args: string[], stdin: string): Promise<Answer> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`no answer in ${NO_ANSWER_MS} ms`));
      }, NO_ANSWER_MS);
      this.waiting.set(id, (answer) => {
        clearTimeout(timer);
        if (answer instanceof Error) reject(answer);
        else resolve(answer);
      });
      this.child.send({ id, args, stdin });
    });
  }

  async stop(): Promise<void> {
    this.coverage.close();
    if (!this.running) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

/** What an answer shows of an input that got the better of the command. */
export function problemsOf(path: string, answer: Omit<Answer, 'id'>, truncatedAt: number): Problem[] {
  const problems: Problem[] = [];
  if (answer.ms > SLOW_MS) problems.push({ kind: 'slow', detail: `ran ${answer.ms.toFixed(0)} ms` });
  if (![0, 1, 2].includes(answer.code)) problems.push({ kind: 'unexpected-error', detail: `exit ${answer.code}` });
  // The command reports what is wrong with objects on stdout; a message on stderr with exit 1 is the
  // CLI's catch-all for an error nobody expected (exit 2 is an input the command names).
  if (answer.code === 1 && answer.stderr !== '')
    problems.push({ kind: 'unexpected-error', detail: answer.stderr.slice(0, 300) });
  // `-o json` is JSON Lines: one object per document, every line of it JSON.
  if (path.includes('-o json') && answer.stdout.length < truncatedAt) {
    const lines = answer.stdout.split('\n').filter((line) => line !== '');
    for (const [at, line] of lines.entries()) {
      try {
        JSON.parse(line);
      } catch (error) {
        problems.push({
          kind: 'bad-report',
          detail: `-o json line ${at + 1} is not JSON: ${(error as Error).message}`,
        });
        break;
      }
    }
  }
  return problems;
}

/** The documents of a YAML or JSON stream as plain JSON values, or undefined when it does not parse. */
function documentsOf(text: string): Json[] | undefined {
  try {
    return loadAll(text, { maxAliases: 100 }).map((d) => JSON.parse(JSON.stringify(d ?? null)) as Json);
  } catch {
    return undefined;
  }
}

/** An object's metadata and spec, where they are objects. */
function partsOf(doc: Json): Json[] {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return [];
  return [doc.metadata, doc.spec].filter((v): v is Json => v !== null && typeof v === 'object');
}

/** YAML's own ways to go wrong: indentation, anchors and aliases, tags, merge keys, flow style. */
function damageYaml(rand: () => number, text: string): string {
  const lines = text.split('\n');
  const at = Math.floor(rand() * lines.length);
  const line = lines[at] ?? '';
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(rand() * xs.length)] as X;
  switch (Math.floor(rand() * 6)) {
    case 0:
      lines[at] = rand() < 0.5 ? ` ${line}` : line.replace(/^ /, '');
      break;
    case 1:
      lines[at] = line.replace(/: /, `: &a${Math.floor(rand() * 3)} `);
      break;
    case 2:
      lines[at] = line.replace(/: .*/, `: *a${Math.floor(rand() * 3)}`);
      break;
    case 3:
      lines[at] = line.replace(
        /: /,
        `: ${pick(['!!binary ', '!!str ', '!!int ', '!!float ', '!!timestamp ', '!!set ', '!custom '])}`,
      );
      break;
    case 4:
      lines.splice(at, 0, `${line.match(/^ */)?.[0] ?? ''}<<: ${pick(['*a0', '{x: 1}', '[*a0, *a1]'])}`);
      break;
    default:
      lines.splice(at, 0, pick(['---', '...', '%YAML 1.1', '# comment', '- x', '{', '? complex', '\t']));
  }
  return lines.join('\n');
}

/** The seed corpus: each stream with each output format, the default field validation. */
function seedCases(streams: string[]): FuzzCase[] {
  return streams.flatMap((body) => FORMATS.map((format) => ({ path: pathFor(format, 'Strict'), body })));
}

/** The objects under review in admission review files, as YAML files would hold them. */
function reviewObjectsAsYaml(files: string[]): string[] {
  return files.flatMap((file) => {
    const object = (JSON.parse(readFileSync(file, 'utf8')) as { request?: { object?: unknown } }).request?.object;
    return object === undefined || object === null ? [] : [dump(object)];
  });
}

/** Fuzzes `staticsite validate` from the seed streams and the objects of the admission fixtures. */
export async function fuzzValidate(options: FuzzOptions): Promise<FuzzReport> {
  const seeds = seedCases([...seedStreams(), ...reviewObjectsAsYaml(seedAdmissionFiles())]);
  const dictionary = [
    ...new Set([
      ...bundleDictionary(join(packageRoot(), 'dist', 'bin')),
      ...corpusWords(seeds.flatMap((c) => documentsOf(c.body) ?? [])),
    ]),
  ];
  return fuzz(options, {
    seeds,
    maxBytes: MAX_BYTES,
    start: () => ValidateTarget.start(),
    run: async (target, input) => {
      try {
        const answer = await target.run(argsOf(input.path), input.body);
        return { status: `exit ${answer.code}`, problems: problemsOf(input.path, answer, 256 * 1024) };
      } catch (error) {
        const kind = target.running ? 'no-answer' : 'crash';
        return { status: kind, problems: [{ kind, detail: (error as Error).message }], lost: true };
      }
    },
    mutate: (rand, from, donorCase) => {
      const pick = <X>(xs: readonly X[]): X => xs[Math.floor(rand() * xs.length)] as X;
      const [, , format = 'text', , fieldValidation = 'Strict'] = from.path.split(' ');
      const path = rand() < 0.1 ? pathFor(pick(FORMATS), pick(FIELD_VALIDATIONS)) : pathFor(format, fieldValidation);
      const docs = documentsOf(from.body);
      if (docs === undefined || docs.length === 0 || rand() < 0.1) {
        return { path, body: rand() < 0.5 ? mutateText(rand, from.body) : damageYaml(rand, from.body) };
      }
      const donor = pick(documentsOf(donorCase.body) ?? [null]);
      for (let n = 1 + Math.floor(rand() * 4); n > 0; n--) {
        const at = Math.floor(rand() * docs.length);
        const doc = docs[at] as Json;
        // Mostly inside metadata and spec, where the engine works: a changed kind only finds no schema.
        const inner = partsOf(doc);
        if (inner.length > 0 && rand() < 0.8) mutateJson(rand, pick(inner), donor, dictionary);
        else docs[at] = mutateJson(rand, doc, donor, dictionary);
      }
      if (rand() < 0.1) docs.push(structuredClone(donor));
      const body =
        docs.length === 1 && rand() < 0.3
          ? (JSON.stringify(docs[0]) ?? 'null')
          : docs.map((d) => dump(d, { noRefs: true })).join('---\n');
      return { path, body: rand() < 0.1 ? damageYaml(rand, body) : body };
    },
  });
}
