/**
 * Every command's flags, declared once: the declaration is what node:util parseArgs reads and what
 * `--help` prints, so the two cannot disagree. And the one reading of each kind of value: durations
 * in Go's time.ParseDuration syntax, whole numbers, ports, HOST:PORT addresses, lists and choices.
 * A value that does not read is a UsageError naming its flag (exit 2).
 */
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { parseGoDurationNanos } from '../crd/apimachinery/go-duration.ts';
import { type BindAddress, bindAddressProblem, parseBindAddress } from '../observability/bind-address.ts';
import { UsageError } from './usage.ts';

/** One flag: how parseArgs reads it and how the synopsis and `--help` show it. */
export interface Flag {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  default?: string | boolean | string[];
  /** The value in the synopsis and the help (`N`, `DIR`, `HOST:PORT`); without it, the default. */
  value?: string;
  /** What it does, one line for `--help`. */
  help: string;
  /** In the synopsis without brackets, and a missing or empty value is a usage error. */
  required?: boolean;
  /** Listed by `--help` but left out of the synopsis: a tuning knob most runs never set. */
  detail?: boolean;
}

export type Flags = Record<string, Flag>;

type Parsed<F extends Flags> = ReturnType<typeof parseArgs<{ options: F; strict: true; allowPositionals: true }>>;

/** What parse gives: parseArgs's values, with each `required` flag known to be there. */
export type FlagValues<F extends Flags> = Parsed<F>['values'] & {
  [K in keyof F as F[K] extends { required: true } ? K : never]: string;
};

/** A command line: `staticsite certs bootstrap`, its flags, and what follows them (`PATH...`). */
export class CommandLine<const F extends Flags> {
  readonly command: string;
  readonly flags: F;
  readonly operands: string;

  constructor(command: string, flags: F, operands = '') {
    this.command = command;
    this.flags = flags;
    this.operands = operands;
  }

  /**
   * The flags and operands of `args`. An unknown flag, an operand where none is taken, and a
   * `required` flag missing or empty throw a UsageError (exit 2).
   */
  parse(args: string[]): { values: FlagValues<F>; positionals: string[] } {
    const { values, positionals } = parseArgs({
      args,
      options: this.flags as ParseArgsOptionsConfig,
      strict: true,
      allowPositionals: this.operands !== '',
    });
    for (const [name, flag] of Object.entries(this.flags)) {
      if (flag.required && !values[name]) throw new UsageError(`--${name} is required (${flag.help})`);
    }
    return { values: values as FlagValues<F>, positionals };
  }

  /** The usage line: every flag but the `detail` ones, in declaration order. */
  synopsis(): string {
    const parts = Object.entries(this.flags)
      .filter(([, flag]) => !flag.detail)
      .map(([name, flag]) => {
        const text = flagText(name, flag, true);
        if (flag.required) return text;
        return flag.multiple ? `[${text}]...` : `[${text}]`;
      });
    return [`staticsite ${this.command}`, ...parts, ...(this.operands ? [this.operands] : [])].join(' ');
  }

  /** One line per flag: its spelling, its value, what it does and its default. */
  help(): string {
    const rows = Object.entries(this.flags).map(([name, flag]) => {
      const shown = Array.isArray(flag.default) ? '' : String(flag.default ?? '');
      const fallback = shown === '' || shown === 'false' ? '' : ` (default ${shown})`;
      const spelling = flag.short ? `-${flag.short}, ${flagText(name, flag)}` : flagText(name, flag);
      return [spelling, `${flag.help}${fallback}`] as const;
    });
    const width = Math.min(40, Math.max(...rows.map(([spelling]) => spelling.length)));
    return rows
      .map(([spelling, text]) =>
        spelling.length > width
          ? `  ${spelling}\n  ${' '.repeat(width)}  ${text}`
          : `  ${spelling.padEnd(width)}  ${text}`,
      )
      .join('\n');
  }
}

/** `--name VALUE` (`-o VALUE` with `short`), or `--name` alone for a boolean. */
function flagText(name: string, flag: Flag, short = false): string {
  const spelling = short && flag.short ? `-${flag.short}` : `--${name}`;
  if (flag.type === 'boolean') return spelling;
  const shown = flag.value ?? (typeof flag.default === 'string' && flag.default !== '' ? flag.default : 'VALUE');
  return `${spelling} ${shown}`;
}

/** The subcommand that `args` starts with, one of `names`, and the arguments after it. */
export function subcommand<const T extends string>(args: readonly string[], names: readonly T[]): [T, string[]] {
  const [name, ...rest] = args;
  if (name !== undefined && (names as readonly string[]).includes(name)) return [name as T, rest];
  const expected = names.map((n) => `"${n}"`).join(' or ');
  throw new UsageError(name === undefined ? `missing subcommand ${expected}` : `unknown subcommand "${name}"`);
}

/** `--help` of a command with subcommands: each one's flags under its name. */
export function helpOf(lines: ReadonlyArray<CommandLine<Flags>>): string {
  return lines.map((line) => `${line.command}:\n${line.help()}`).join('\n\n');
}

/** The usage of a command with subcommands: each one's usage line, `staticsite` said once. */
export function usageOf(lines: ReadonlyArray<CommandLine<Flags>>): string {
  return lines.map((line, i) => (i === 0 ? line.synopsis() : line.synopsis().replace(/^staticsite /, ''))).join(' | ');
}

// Durations: Go's time.ParseDuration, as controller-runtime's and client-go's flags read them.

const DURATION_UNITS = ['ns', 'us', 'µs', 'μs', 'ms', 's', 'm', 'h'];
const MAX_NANOS = 2n ** 63n - 1n;
const DURATION_FORM = 'a duration such as 90s, 10m or 1h30m (units ns, us, ms, s, m, h)';

/**
 * Why Go's time.ParseDuration refuses `text`, in its terms: a number without a unit, a unit it does
 * not know, or a text that is no duration at all. Only asked once the parse has failed.
 */
function durationProblem(text: string): string {
  let rest = text.replace(/^[-+]/, '');
  const invalid = `got ${JSON.stringify(text)}`;
  while (rest !== '') {
    const [token = '', whole = '', , fraction = '', unit = ''] = /^(\d*)(\.(\d*))?([^\d.]*)/.exec(rest) ?? [];
    if (whole === '' && fraction === '') return invalid;
    if (unit === '') return `${JSON.stringify(text)} has a number without a unit`;
    if (!DURATION_UNITS.includes(unit)) return `unknown unit ${JSON.stringify(unit)} in ${JSON.stringify(text)}`;
    rest = rest.slice(token.length);
  }
  return invalid;
}

/**
 * A duration flag in milliseconds, read as Go's time.ParseDuration reads it: `300ms`, `1.5h`,
 * `2h45m`, `0`; a bare number other than 0 has no unit and is refused, as is a day (`d`), which Go
 * does not have. `min` (milliseconds, default 0) is the shortest the flag takes; with `positive`,
 * it must be longer than 0.
 */
export function duration(flag: string, text: string, options: { min?: number; positive?: boolean } = {}): number {
  const nanos = parseGoDurationNanos(text);
  if (nanos === undefined) throw new UsageError(`${flag} must be ${DURATION_FORM}: ${durationProblem(text)}`);
  if (nanos > MAX_NANOS || nanos < -MAX_NANOS - 1n) {
    throw new UsageError(`${flag} must be ${DURATION_FORM}: ${JSON.stringify(text)} is longer than 2562047h`);
  }
  const ms = Number(nanos) / 1e6;
  if (options.positive && ms <= 0) throw new UsageError(`${flag} must be longer than 0s`);
  const min = options.min ?? 0;
  if (ms < min) throw new UsageError(`${flag} must be at least ${formatDuration(min)}, got ${JSON.stringify(text)}`);
  return ms;
}

/** Milliseconds as a Go duration flag is written: `1s`, `10m0s` reads as `10m`, `1h30m`, `500ms`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
}

// Whole numbers: decimal digits only (no sign, exponent, hex or blanks), one rule for 0.

/**
 * A whole number flag from `min` (default 0) to `max`. `Number` alone would take `""` and `" "` as
 * 0, `1e3` as 1000 and `0x10` as 16; Go's strconv.Atoi, which controller-runtime's flags use, takes
 * none of them.
 */
export function wholeNumber(flag: string, text: string, options: { min?: number; max?: number } = {}): number {
  const min = options.min ?? 0;
  const max = options.max ?? Number.MAX_SAFE_INTEGER;
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= min && n <= max)) {
    const range = options.max === undefined ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${flag} must be a whole number ${range}, got ${JSON.stringify(text)}`);
  }
  return n;
}

/** A count that 0 would make meaningless (workers, days): at least 1. */
export function positiveInt(flag: string, text: string, max?: number): number {
  return wholeNumber(flag, text, { min: 1, ...(max !== undefined && { max }) });
}

/** A number for which 0 means something (0 QPS: no throttle): at least 0. */
export function nonNegativeInt(flag: string, text: string, max?: number): number {
  return wholeNumber(flag, text, { min: 0, ...(max !== undefined && { max }) });
}

/** A port to listen on, where 0 asks the system for any free port. */
export function listenPort(flag: string, text: string): number {
  return wholeNumber(flag, text, { min: 0, max: 65535 });
}

/** A port something else listens on: 1-65535. */
export function port(flag: string, text: string): number {
  return wholeNumber(flag, text, { min: 1, max: 65535 });
}

/** controller-runtime's bind addresses: `HOST:PORT`, `:PORT`, `[IPv6]:PORT`, or `0` for none. */
export function address(flag: string, text: string): BindAddress | 'off' {
  const parsed = parseBindAddress(text);
  if (parsed === undefined) throw new UsageError(bindAddressProblem(flag, text));
  return parsed;
}

/** A comma-separated list: blanks around items are dropped, and so are empty items (`""` is none). */
export function list(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** One of a fixed set of words. */
export function oneOf<const T extends string>(flag: string, text: string, choices: readonly T[]): T {
  if ((choices as readonly string[]).includes(text)) return text as T;
  throw new UsageError(`${flag} must be one of ${choices.join(', ')}, got ${JSON.stringify(text)}`);
}

/** `true` or `false`, for a flag that takes a value (`--metrics-secure=false`). */
export function bool(flag: string, text: string): boolean {
  if (text === 'true' || text === 'false') return text === 'true';
  throw new UsageError(`${flag} must be true or false, got ${JSON.stringify(text)}`);
}
