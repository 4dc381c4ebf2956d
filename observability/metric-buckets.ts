/**
 * prometheus.ExponentialBuckets(10e-9, 10, 12): 1e-8 s to 1000 s, the buckets of controller-runtime's
 * work-queue and webhook latency histograms. Rounded to one significant digit so the `le` labels
 * read as Go writes them (1e-08 ... 1000), not as repeated multiplication leaves them (1.0000000000000001e-7).
 */
export const CONTROLLER_RUNTIME_BUCKETS: number[] = Array.from({ length: 12 }, (_, i) =>
  Number((1e-8 * 10 ** i).toPrecision(1)),
);
