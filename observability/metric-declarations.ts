import { Counter, Gauge, Histogram, Registry } from 'prom-client';

type Kind = 'counter' | 'gauge' | 'histogram';

/** One metric, described: what prom-client needs to declare it, but the registry. */
export interface MetricDescription<K extends Kind = Kind, L extends string = string> {
  kind: K;
  name: string;
  help: string;
  labels: readonly L[];
  buckets?: readonly number[];
}

/** Describes a metric of `kind` (one without buckets); without labels it has one series. */
function described<K extends 'counter' | 'gauge'>(kind: K) {
  return <L extends string = string>(
    name: string,
    help: string,
    labels: readonly L[] = [],
  ): MetricDescription<K, L> => ({
    kind,
    name,
    help,
    labels,
  });
}

export const counter = described('counter');
export const gauge = described('gauge');

export function histogram<L extends string>(
  name: string,
  help: string,
  labels: readonly L[],
  buckets: readonly number[],
): MetricDescription<'histogram', L> {
  return { kind: 'histogram', name, help, labels, buckets };
}

type MetricOf<D> =
  D extends MetricDescription<'counter', infer L>
    ? Counter<L>
    : D extends MetricDescription<'gauge', infer L>
      ? Gauge<L>
      : D extends MetricDescription<'histogram', infer L>
        ? Histogram<L>
        : never;

/** Metrics by name, as a table of descriptions declares them. */
export type DeclaredMetrics<T> = { readonly [K in keyof T]: MetricOf<T[K]> };

function declare(description: MetricDescription, registers: Registry[]): Counter | Gauge | Histogram {
  const { kind, name, help, labels, buckets } = description;
  const config = { name, help, labelNames: labels, registers };
  if (kind === 'counter') return new Counter(config);
  if (kind === 'gauge') return new Gauge(config);
  return new Histogram({ ...config, ...(buckets && { buckets: [...buckets] }) });
}

/** Declares every metric of `table` on `registry` (never the global one), in the table's order. */
export function declareMetrics<T extends Record<string, MetricDescription>>(
  registry: Registry,
  table: T,
): DeclaredMetrics<T> {
  const registers = [registry];
  return Object.fromEntries(
    Object.entries(table).map(([key, description]) => [key, declare(description, registers)]),
  ) as DeclaredMetrics<T>;
}

/**
 * A class whose instances hold the metrics of `table`, each under its key, on the registry passed
 * to the constructor or on one of their own.
 */
export function metricsClass<T extends Record<string, MetricDescription>>(table: T) {
  return class {
    readonly registry: Registry;
    constructor(registry: Registry = new Registry()) {
      this.registry = registry;
      Object.assign(this, declareMetrics(registry, table));
    }
  } as new (
    registry?: Registry,
  ) => DeclaredMetrics<T> & { readonly registry: Registry };
}

/** A gauge read at scrape time: `collect` sets its series just before each scrape. */
export function scrapedGauge<L extends string>(
  registry: Registry,
  description: MetricDescription<'gauge', L>,
  collect: (gauge: Gauge<L>) => void,
): Gauge<L> {
  const { name, help, labels } = description;
  return new Gauge({
    name,
    help,
    labelNames: labels,
    registers: [registry],
    collect() {
      collect(this);
    },
  });
}
