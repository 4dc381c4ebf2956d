import type { ConvergenceSample, Violation } from './types.ts';

/** After each fault stopped, convergence was observed within `boundMs`. */
export function convergedWithin(samples: readonly ConvergenceSample[], boundMs: number): Violation[] {
  return samples.flatMap((s) => {
    if (s.convergedAt === undefined) {
      return [{ rule: 'convergedWithin' as const, detail: `${s.label}: never converged after ${s.faultsStoppedAt}` }];
    }
    const took = s.convergedAt - s.faultsStoppedAt;
    if (took <= boundMs) return [];
    return [
      { rule: 'convergedWithin' as const, detail: `${s.label}: converged ${took} ms after, bound ${boundMs} ms` },
    ];
  });
}
