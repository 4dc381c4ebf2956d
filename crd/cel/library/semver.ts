/**
 * Kubernetes semver library (version 1): semver, isSemver (with optional normalize), isGreaterThan, isLessThan,
 * compareTo, major, minor, patch. Parsing follows github.com/blang/semver/v4 Parse.
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/library/semverlib.go; blang/semver/v4 semver.go.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { CelFunctionError } from '../common/errors.ts';

type PreRelease = { num: bigint; str: string; isNum: boolean };

export class Semver {
  readonly major: bigint;
  readonly minor: bigint;
  readonly patch: bigint;
  readonly pre: PreRelease[];
  constructor(major: bigint, minor: bigint, patch: bigint, pre: PreRelease[]) {
    this.major = major;
    this.minor = minor;
    this.patch = patch;
    this.pre = pre;
  }
  equals(other: unknown): boolean {
    return other instanceof Semver && compareSemver(this, other) === 0n;
  }
}

const NUMBERS = /^[0-9]+$/;
const ALPHANUM = /^[0-9A-Za-z-]+$/;
const q = (s: string) => JSON.stringify(s);
const leadingZero = (s: string) => s.length > 1 && s[0] === '0';

function numberPart(part: string, label: string): bigint {
  if (!NUMBERS.test(part)) throw new Error(`Invalid character(s) found in ${label} number ${q(part)}`);
  if (leadingZero(part))
    throw new Error(`${label[0]?.toUpperCase()}${label.slice(1)} number must not contain leading zeroes ${q(part)}`);
  return BigInt(part);
}

export function parseSemver(s: string): Semver {
  if (s.length === 0) throw new Error('Version string empty');
  const first = s.indexOf('.');
  const second = first < 0 ? -1 : s.indexOf('.', first + 1);
  if (second < 0) throw new Error('No Major.Minor.Patch elements found');
  const major = numberPart(s.slice(0, first), 'major');
  const minor = numberPart(s.slice(first + 1, second), 'minor');
  let patchStr = s.slice(second + 1);
  let build: string[] = [];
  let prerelease: string[] = [];
  const plus = patchStr.indexOf('+');
  if (plus >= 0) {
    build = patchStr.slice(plus + 1).split('.');
    patchStr = patchStr.slice(0, plus);
  }
  const dash = patchStr.indexOf('-');
  if (dash >= 0) {
    prerelease = patchStr.slice(dash + 1).split('.');
    patchStr = patchStr.slice(0, dash);
  }
  const patch = numberPart(patchStr, 'patch');
  const pre = prerelease.map((p): PreRelease => {
    if (p.length === 0) throw new Error('Prerelease is empty');
    if (NUMBERS.test(p)) {
      if (leadingZero(p)) throw new Error(`Numeric PreRelease version must not contain leading zeroes ${q(p)}`);
      return { num: BigInt(p), str: '', isNum: true };
    }
    if (ALPHANUM.test(p)) return { num: 0n, str: p, isNum: false };
    throw new Error(`Invalid character(s) found in prerelease ${q(p)}`);
  });
  for (const b of build) {
    if (b.length === 0) throw new Error('Build meta data is empty');
    if (!ALPHANUM.test(b)) throw new Error(`Invalid character(s) found in build meta data ${q(b)}`);
  }
  return new Semver(major, minor, patch, pre);
}

/** normalizeAndParse in semverlib.go: strips "v", leading zeros, fills missing minor/patch. */
export function normalizeAndParseSemver(input: string): Semver {
  const s = input.startsWith('v') ? input.slice(1) : input;
  const parts: string[] = [];
  let rest = s;
  for (let i = 0; i < 2; i++) {
    const dot = rest.indexOf('.');
    if (dot < 0) break;
    parts.push(rest.slice(0, dot));
    rest = rest.slice(dot + 1);
  }
  parts.push(rest);
  const normalized = parts.map((p) => {
    if (p.length <= 1) return p;
    const trimmed = p.replace(/^0+/, '');
    return trimmed.length === 0 || !/[0-9]/.test(trimmed[0] ?? '') ? `0${trimmed}` : trimmed;
  });
  if (normalized.length < 3) {
    if (/[+-]/.test(normalized[normalized.length - 1] ?? '')) {
      throw new Error('short version cannot contain PreRelease/Build meta data');
    }
    while (normalized.length < 3) normalized.push('0');
  }
  return parseSemver(normalized.join('.'));
}

function cmp(a: bigint, b: bigint): bigint {
  return a === b ? 0n : a > b ? 1n : -1n;
}

export function compareSemver(v: Semver, o: Semver): bigint {
  const head = cmp(v.major, o.major) || cmp(v.minor, o.minor) || cmp(v.patch, o.patch);
  if (head !== 0n) return head;
  if (v.pre.length === 0 && o.pre.length === 0) return 0n;
  if (v.pre.length === 0) return 1n;
  if (o.pre.length === 0) return -1n;
  for (let i = 0; i < v.pre.length && i < o.pre.length; i++) {
    const a = v.pre[i] as PreRelease;
    const b = o.pre[i] as PreRelease;
    let c: bigint;
    if (a.isNum && b.isNum) c = cmp(a.num, b.num);
    else if (a.isNum) c = -1n;
    else if (b.isNum) c = 1n;
    else c = a.str === b.str ? 0n : a.str > b.str ? 1n : -1n;
    if (c !== 0n) return c;
  }
  return cmp(BigInt(v.pre.length), BigInt(o.pre.length));
}

function parseWith(s: string, normalize: boolean): Semver {
  try {
    return normalize ? normalizeAndParseSemver(s) : parseSemver(s);
  } catch (error) {
    throw new CelFunctionError((error as Error).message);
  }
}

export function registerSemver(env: Environment): void {
  const S = 'kubernetes.Semver';
  env.registerType(S, Semver);
  env.registerFunction(`semver(string): ${S}`, (s: string) => parseWith(s, false));
  env.registerFunction(`semver(string, bool): ${S}`, parseWith);
  env.registerFunction('isSemver(string): bool', (s: string) => isSemver(s, false));
  env.registerFunction('isSemver(string, bool): bool', isSemver);
  env.registerFunction(`${S}.isGreaterThan(${S}): bool`, (a: Semver, b: Semver) => compareSemver(a, b) === 1n);
  env.registerFunction(`${S}.isLessThan(${S}): bool`, (a: Semver, b: Semver) => compareSemver(a, b) === -1n);
  env.registerFunction(`${S}.compareTo(${S}): int`, compareSemver);
  env.registerFunction(`${S}.major(): int`, (v: Semver) => v.major);
  env.registerFunction(`${S}.minor(): int`, (v: Semver) => v.minor);
  env.registerFunction(`${S}.patch(): int`, (v: Semver) => v.patch);
}

function isSemver(s: string, normalize: boolean): boolean {
  try {
    if (normalize) normalizeAndParseSemver(s);
    else parseSemver(s);
    return true;
  } catch {
    return false;
  }
}
