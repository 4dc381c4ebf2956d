import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * Declares prom-client metrics on one registry (never the global one), each from a compact
 * description: its name, help text and label names (none: one series without labels); a histogram
 * adds its buckets, a gauge read at scrape time the function that sets it.
 */
export interface MetricDeclarations {
  counter<L extends string = string>(name: string, help: string, labels?: readonly L[]): Counter<L>;
  gauge<L extends string = string>(
    name: string,
    help: string,
    labels?: readonly L[],
    collect?: (gauge: Gauge<L>) => void,
  ): Gauge<L>;
  histogram<L extends string = string>(
    name: string,
    help: string,
    labels: readonly L[],
    buckets: readonly number[],
  ): Histogram<L>;
}

export function declareMetrics(registry: Registry): MetricDeclarations {
  const registers = [registry];
  return {
    counter: (name, help, labels = []) => new Counter({ name, help, labelNames: labels, registers }),
    gauge: (name, help, labels = [], collect = undefined) =>
      new Gauge({
        name,
        help,
        labelNames: labels,
        registers,
        ...(collect && {
          collect() {
            collect(this);
          },
        }),
      }),
    histogram: (name, help, labels, buckets) =>
      new Histogram({ name, help, labelNames: labels, buckets: [...buckets], registers }),
  };
}
