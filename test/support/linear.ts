/** Asserts that measured work (time, heap) grows with its input as a line, not as a square. */
import { expect } from 'chai';

/** Half way, on a log scale, between linear work (a slope of 1) and quadratic work (2). */
const SLOPE_LIMIT = 1.5;

/**
 * Linear: the slope of log(work) over log(input), fitted through every size, under SLOPE_LIMIT, and the
 * largest input's work within (its ratio to the smallest)^SLOPE_LIMIT of the smallest's: for 8x the
 * input, 22.6x the work (linear takes 8x, quadratic 64x). The fit, not each doubling on its own: one
 * size may pay a step (the first full collection of a bigger heap) without the work being quadratic,
 * and CI's runs showed such steps at any size (52, 61, 131, 536 ms: a slope of 1.1; 12.6, 34.3, 107.7,
 * 151.9 ms: 1.2; 17.2, 24.7, 98.8, 321.2 ms: 1.47, 18.7x). Values under the floor count as the floor.
 */
export function expectLinear(sizes: readonly number[], values: readonly number[], floor: number, what: string) {
  const report = `${what} for ${sizes.join(', ')}: ${values.map((v) => v.toFixed(1)).join(', ')}`;
  const atLeast = (v: number | undefined) => Math.max(v ?? 0, floor);
  const largest = (sizes.at(-1) ?? 1) / (sizes[0] ?? 1);
  expect(values.at(-1) ?? 0, report).to.be.below(largest ** SLOPE_LIMIT * atLeast(values[0]));
  expect(logLogSlope(sizes, values.map(atLeast)), `slope of ${report}`).to.be.below(SLOPE_LIMIT);
}

/** The least-squares slope of log(y) over log(x). */
function logLogSlope(xs: readonly number[], ys: readonly number[]): number {
  const lx = xs.map(Math.log);
  const ly = ys.map(Math.log);
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  const [mx, my] = [mean(lx), mean(ly)];
  let covariance = 0;
  let variance = 0;
  for (let i = 0; i < lx.length; i++) {
    covariance += ((lx[i] ?? 0) - mx) * ((ly[i] ?? 0) - my);
    variance += ((lx[i] ?? 0) - mx) ** 2;
  }
  return covariance / variance;
}
