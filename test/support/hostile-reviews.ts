/**
 * Reviews built to make the webhook work hard: for each shape, a review with `n` hostile items, and
 * the largest one under a byte and a value budget. Shared by the complexity tests (doubling `n`),
 * the 3 MiB test of the built webhook, and the isolation tests.
 */
import { readFileSync } from 'node:fs';
import { DEFAULT_MAX_VALUES, shapeProblem } from '../../webhook/review/codec.ts';

// biome-ignore lint/suspicious/noExplicitAny: reviews are arbitrary JSON the shapes edit in place
type Json = Record<string, any>;

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
const CREATE = fixture('admission/create-v1.json');
const CONVERT = fixture('conversion/v1-to-v1alpha1.json');

function create(edit: (object: Json, review: Json) => void): Json {
  const review = JSON.parse(CREATE) as Json;
  edit(review.request.object, review);
  return review;
}

function update(edit: (object: Json, old: Json) => void): Json {
  const review = JSON.parse(CREATE) as Json;
  review.request.operation = 'UPDATE';
  review.request.oldObject = structuredClone(review.request.object);
  review.request.oldObject.metadata.resourceVersion = '1';
  review.request.object.metadata.resourceVersion = '1';
  edit(review.request.object, review.request.oldObject);
  return review;
}

function conversion(objects: Json[]): Json {
  const review = JSON.parse(CONVERT) as Json;
  review.request.objects = objects;
  return review;
}

const site = (i: number): Json => ({
  apiVersion: 'staticsite.dev/v1',
  kind: 'StaticSite',
  metadata: { name: `s${i}`, namespace: 'web', annotations: { a: 'b' } },
  spec: { content: 'x', hostname: `s${i}.example.com`, replicas: 2 ** 60 + i },
});

export type ReviewPath = '/mutate' | '/validate' | '/convert';

export interface HostileShape {
  name: string;
  /** The paths this shape is meant for. */
  paths: readonly ReviewPath[];
  build(n: number): Json;
}

const ADMISSION: readonly ReviewPath[] = ['/mutate', '/validate'];

export const HOSTILE_SHAPES: readonly HostileShape[] = [
  {
    name: 'controller owner references',
    paths: ADMISSION,
    build: (n) =>
      create((o) => {
        o.metadata.ownerReferences = Array.from({ length: n }, (_, i) => ({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: `owner-${i}`,
          uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
          controller: true,
        }));
      }),
  },
  {
    name: 'invalid labels',
    paths: ADMISSION,
    build: (n) =>
      create((o) => {
        o.metadata.labels = Object.fromEntries(Array.from({ length: n }, (_, i) => [`-bad${i}`, '-v-']));
      }),
  },
  {
    name: 'invalid labels changed on update',
    paths: ADMISSION,
    build: (n) =>
      update((o) => {
        o.metadata.labels = Object.fromEntries(Array.from({ length: n }, (_, i) => [`bad key ${i}`, 'v']));
      }),
  },
  {
    name: 'invalid finalizers',
    paths: ADMISSION,
    build: (n) =>
      create((o) => {
        o.metadata.finalizers = Array.from({ length: n }, (_, i) => `bad finalizer ${i}`);
      }),
  },
  {
    name: 'managedFields entries',
    paths: ADMISSION,
    build: (n) =>
      create((o) => {
        o.metadata.managedFields = Array.from({ length: n }, (_, i) => ({
          manager: `m${i}`,
          operation: i % 2 ? 'Apply' : 'Bogus',
          apiVersion: 'staticsite.dev/v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:content': {} } },
        }));
      }),
  },
  {
    name: 'unknown fields',
    paths: ADMISSION,
    build: (n) =>
      create((o) => {
        for (let i = 0; i < n; i++) o.spec[`unknown${i}`] = i;
      }),
  },
  {
    name: 'list-map items with duplicate keys',
    paths: ADMISSION,
    build: (n) =>
      create((o) => {
        o.status = {
          conditions: Array.from({ length: n }, (_, i) => ({
            type: i % 2 ? 'Ready' : `T${i}`,
            status: 'Maybe',
            reason: 'not a reason',
            message: 'm',
            lastTransitionTime: 'yesterday',
          })),
        };
      }),
  },
  {
    name: 'multi-byte metadata.name',
    paths: ADMISSION,
    build: (n) =>
      create((o) => {
        o.metadata.name = '🙂'.repeat(n);
      }),
  },
  {
    name: 'multi-byte spec.content',
    paths: ADMISSION,
    build: (n) =>
      create((o) => {
        o.spec.content = 'ü🙂'.repeat(n);
      }),
  },
  {
    name: 'long annotation keys',
    paths: ADMISSION,
    build: (n) =>
      create((o) => {
        o.metadata.annotations = Object.fromEntries(
          Array.from({ length: n }, (_, i) => [`${'k'.repeat(250)}${i}/${'n'.repeat(70)}`, 'v']),
        );
      }),
  },
  {
    name: 'a long request uid',
    paths: ADMISSION,
    build: (n) =>
      create((_o, review) => {
        review.request.uid = 'u'.repeat(n);
      }),
  },
  {
    name: 'sites to convert',
    paths: ['/convert'],
    build: (n) => conversion(Array.from({ length: n }, (_, i) => site(i))),
  },
  {
    name: 'annotations given as a string, to convert',
    paths: ['/convert'],
    build: (n) => conversion([{ ...site(0), metadata: { name: 'a', annotations: 'x'.repeat(n) } }]),
  },
  {
    name: 'deep unknown values, to convert',
    paths: ['/convert'],
    build: (n) => {
      let deep: Json = {};
      for (let i = 0; i < 90; i++) deep = { d: deep };
      return conversion(Array.from({ length: n }, (_, i) => ({ ...site(i), extra: deep })));
    },
  },
];

/** The review's body, and whether it fits `maxBytes` and the webhook's value limit. */
function fits(review: Json, maxBytes: number): boolean {
  const body = Buffer.from(JSON.stringify(review));
  return body.length <= maxBytes && shapeProblem(body, 100, DEFAULT_MAX_VALUES) === undefined;
}

/** The shape's largest review whose body fits `maxBytes` and the webhook's value and depth limits. */
export function largestReview(shape: HostileShape, maxBytes: number): { n: number; review: Json } {
  let low = 1;
  let high = 2;
  while (fits(shape.build(high), maxBytes)) {
    low = high;
    high *= 2;
  }
  // fits(low), not fits(high): a binary search, to 1 % of n.
  while (high - low > Math.max(1, low / 100)) {
    const mid = Math.floor((low + high) / 2);
    if (fits(shape.build(mid), maxBytes)) low = mid;
    else high = mid;
  }
  return { n: low, review: shape.build(low) };
}
