/**
 * Go's time.ParseDuration grammar, without the CEL library, so the CLI's flags and the schema's
 * `duration` format read durations as the engine does. Source: Go src/time/format.go (ParseDuration).
 */
const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const PART = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;

/** Parses a Go duration string ("1h30m", "-1.5s") into nanoseconds, or undefined when it is not one. */
export function parseGoDurationNanos(input: string): bigint | undefined {
  let s = input;
  let negative = false;
  if (s[0] === '-' || s[0] === '+') {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') return undefined;
  let total = 0n;
  while (s !== '') {
    const m = PART.exec(s);
    if (!m) return undefined;
    const [all, whole = '', frac = '', unit = ''] = m;
    if (whole === '' && frac === '') return undefined;
    const scale = UNIT_NANOS[unit] ?? 1n;
    total += BigInt(whole || '0') * scale;
    if (frac !== '') total += (BigInt(frac) * scale) / 10n ** BigInt(frac.length);
    s = s.slice(all.length);
  }
  return negative ? -total : total;
}
