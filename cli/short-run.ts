/**
 * V8 settings for a command whose run is about as long as its start (`validate` of a few files), set
 * before its modules load. Both trade memory a long-running process would keep for CPU a short one
 * would spend (bench/RESULTS.md, "One object against a big CRD set"):
 * - `--no-lazy`: every function of a module compiles with the module, so the compile cache holds the
 *   functions the command runs, not only the modules' top levels (V8 would compile those again in
 *   every run). V8's flags tag the compile cache's directory, so eager and lazy code never mix.
 * - `--semi-space-growth-factor=16`: the young generation grows to its full size at the first
 *   scavenge instead of doubling at each of six, each copying the CRDs read so far.
 */
export const SHORT_RUN_V8_FLAGS = '--no-lazy --semi-space-growth-factor=16';

/** Sets SHORT_RUN_V8_FLAGS with v8.setFlagsFromString; a flag V8 refuses leaves the defaults. */
export function tuneForShortRun(setFlags: (flags: string) => void): void {
  try {
    setFlags(SHORT_RUN_V8_FLAGS);
  } catch {
    // only slower
  }
}
