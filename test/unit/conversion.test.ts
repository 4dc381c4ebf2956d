import { expect } from 'chai';
import {
  ConversionError,
  convertStaticSite,
  HOSTNAME_ANNOTATION,
  type StaticSiteV1,
  type StaticSiteV1alpha1,
  toV1,
  toV1alpha1,
} from '../../api/index.ts';

const meta = { name: 'shop', namespace: 'web', uid: 'u-1', resourceVersion: '7', generation: 2 };

const v1Objects: StaticSiteV1[] = [
  { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: meta, spec: { content: '<h1>hi</h1>' } },
  {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: {
      ...meta,
      labels: { team: 'a' },
      annotations: { note: 'x' },
      finalizers: ['staticsite.dev/external-record'],
    },
    spec: { content: 'c', replicas: 3, tier: 'prod', hostname: 'shop.example.com' },
    status: {
      observedGeneration: 2,
      readyReplicas: 3,
      url: 'http://shop.example.com',
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Available',
          message: 'ok',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    },
  },
  {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: meta,
    spec: { content: 'c', hostname: 'a.b' },
  },
];

const v1alpha1Objects: StaticSiteV1alpha1[] = [
  { apiVersion: 'staticsite.dev/v1alpha1', kind: 'StaticSite', metadata: meta, spec: { content: 'x' } },
  {
    apiVersion: 'staticsite.dev/v1alpha1',
    kind: 'StaticSite',
    metadata: { ...meta, annotations: { keep: 'me' } },
    spec: { content: 'x', replicas: 2, tier: 'prod' },
    status: { readyReplicas: 1 },
  },
];

describe('api: conversion between v1alpha1 and v1', () => {
  v1Objects.forEach((object, i) => {
    it(`v1 -> v1alpha1 -> v1 loses nothing (case ${i})`, () => {
      const down = toV1alpha1(structuredClone(object));
      expect(down.apiVersion).to.equal('staticsite.dev/v1alpha1');
      expect(down.spec).not.to.have.property('hostname');
      expect(toV1(down)).to.deep.equal(object);
    });
  });

  v1alpha1Objects.forEach((object, i) => {
    it(`v1alpha1 -> v1 -> v1alpha1 loses nothing (case ${i})`, () => {
      const up = toV1(structuredClone(object));
      expect(up.apiVersion).to.equal('staticsite.dev/v1');
      expect(toV1alpha1(up)).to.deep.equal(object);
    });
  });

  it('keeps spec.hostname in the staticsite.dev/hostname annotation on v1alpha1', () => {
    const down = toV1alpha1(v1Objects[1] as StaticSiteV1);
    expect(down.metadata.annotations).to.deep.equal({ note: 'x', [HOSTNAME_ANNOTATION]: 'shop.example.com' });
    expect(down.metadata.finalizers).to.deep.equal(['staticsite.dev/external-record']);
    expect(down.status).to.deep.equal(v1Objects[1]?.status);
  });

  it('does not mutate its input', () => {
    const input = structuredClone(v1Objects[1] as StaticSiteV1);
    toV1alpha1(input);
    expect(input).to.deep.equal(v1Objects[1]);
  });

  it('carries fields it does not know through unchanged', () => {
    const object = { ...v1Objects[0], spec: { content: 'x', future: { a: 1 } }, extra: true };
    const converted = convertStaticSite(object, 'staticsite.dev/v1alpha1') as unknown as Record<string, unknown>;
    expect(converted.extra).to.equal(true);
    expect(converted.spec).to.deep.equal({ content: 'x', future: { a: 1 } });
  });

  it('returns the object unchanged when it already has the desired version', () => {
    const object = v1Objects[0] as StaticSiteV1;
    expect(convertStaticSite(object, 'staticsite.dev/v1')).to.equal(object);
  });

  const bad: Array<[string, unknown, string, string]> = [
    ['a non-object', 'x', 'staticsite.dev/v1', 'object is not a JSON object'],
    ['another kind', { ...v1Objects[0], kind: 'Pod' }, 'staticsite.dev/v1alpha1', 'unexpected kind "Pod"'],
    [
      'an unknown version',
      { ...v1Objects[0], apiVersion: 'staticsite.dev/v2' },
      'staticsite.dev/v1',
      'unsupported apiVersion "staticsite.dev/v2"',
    ],
    ['an unknown target', v1Objects[0], 'staticsite.dev/v9', 'unsupported desiredAPIVersion "staticsite.dev/v9"'],
    ['no spec', { ...v1Objects[0], spec: undefined }, 'staticsite.dev/v1alpha1', 'object has no spec'],
  ];
  for (const [what, object, desired, message] of bad) {
    it(`rejects ${what} with a ConversionError naming the problem`, () => {
      expect(() => convertStaticSite(object, desired)).to.throw(ConversionError, message);
    });
  }
});

describe('webhook: a ConversionReview with objects that are not StaticSites is a Failure result, never a crash', () => {
  it('a namespace that is an object without a prototype (found by test/e2e/webhook-fuzz.test.ts, seed 5)', async () => {
    const { convertReview } = await import('../../webhook/conversion/convert.ts');
    const namespace = Object.create(null) as object;
    const review = convertReview({
      uid: 'u',
      desiredAPIVersion: 'staticsite.dev/v1',
      objects: [
        { apiVersion: 'staticsite.dev/v9', kind: 'StaticSite', metadata: { name: 'odd', namespace }, spec: {} },
      ],
    });
    expect(review.response?.result).to.deep.equal({
      status: 'Failure',
      message: 'cannot convert /odd to staticsite.dev/v1: unsupported apiVersion "staticsite.dev/v9"',
    });
  });
});
