/** Seeds and dictionaries for the fuzzers: files of inputs, and the words the code under test looks for. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageFile } from '../../cli/package-root.ts';
import type { Json } from './mutations.ts';

/** Every file directly under each directory whose name ends with one of `extensions`, sorted. */
export function filesUnder(dirs: readonly string[], extensions: readonly string[] = ['.json']): string[] {
  return dirs.flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => extensions.some((e) => f.endsWith(e)))
      .sort()
      .map((f) => join(dir, f)),
  );
}

/** Every `.json` file directly under each directory. */
export function jsonFilesUnder(...dirs: string[]): string[] {
  return filesUnder(dirs);
}

/**
 * The string literals of the built code in `dirs`: field names, enum values, words
 * its comparisons look for. Block coverage cannot see how close a value came to one; a dictionary
 * gives the mutations the words to try.
 */
export function bundleDictionary(...dirs: string[]): string[] {
  const words = new Set<string>();
  for (const dir of dirs) {
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
      for (const match of readFileSync(join(dir, file), 'utf8').matchAll(/["'`]([A-Za-z][\w./:-]{1,40})["'`]/g)) {
        words.add(match[1] as string);
      }
    }
  }
  return [...words].sort();
}

/** The keys and short strings of parsed inputs. */
export function corpusWords(docs: readonly Json[]): string[] {
  const words = new Set<string>();
  const walk = (value: Json) => {
    if (typeof value === 'string' && value.length <= 64) words.add(value);
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) value.forEach(walk);
    else
      for (const [key, child] of Object.entries(value)) {
        words.add(key);
        walk(child);
      }
  };
  docs.forEach(walk);
  return [...words];
}

/** JSON text parsed, or undefined when it is not JSON. */
export function parsedJson(body: string): Json | undefined {
  try {
    return JSON.parse(body) as Json;
  } catch {
    return undefined;
  }
}

/** The review files the webhook fuzzer starts from: the admission and conversion fixtures. */
export function seedReviewFiles(): string[] {
  return jsonFilesUnder(packageFile('test', 'fixtures', 'admission'), packageFile('test', 'fixtures', 'conversion'));
}

/** The admission review fixtures alone (their objects seed `staticsite validate`). */
export function seedAdmissionFiles(): string[] {
  return jsonFilesUnder(packageFile('test', 'fixtures', 'admission'));
}

/** YAML streams of objects both fuzzers start from: the sample a user applies and the fuzz seeds. */
export function seedStreams(): string[] {
  return filesUnder(
    [packageFile('manifests', 'samples'), packageFile('test', 'fixtures', 'fuzz-seeds')],
    ['.yaml'],
  ).map((file) => readFileSync(file, 'utf8'));
}
