/**
 * The storage migration's decisions against the in-memory API server: what it writes, what it retries,
 * where it stops. What the real API server does with those writes (and where objects end up in etcd)
 * is test/e2e/storage-migration.test.ts.
 */
import { expect } from 'chai';
import { migrateStorageCommand } from '../../cli/migrate-storage-command.ts';
import type { CommandIO } from '../../cli/usage.ts';
import { KubeApi } from '../../kube/api-client.ts';
import { MERGE_PATCH_CONTENT_TYPE } from '../../kube/patch-types.ts';
import { MigrationError, migrateStorage, type Progress } from '../../migration/migrate.ts';
import { FakeApiServer } from '../support/kube/index.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const CRD = 'widgets.example.com';
const SITES = '/apis/example.com/v1/widgets';

function crd(storedVersions: string[]) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD },
    spec: {
      group: 'example.com',
      names: { plural: 'widgets', kind: 'Widget' },
      // Cluster-scoped here: the fake serves a collection only at the path its objects were seeded under.
      scope: 'Cluster',
      versions: [
        { name: 'v1alpha1', served: true, storage: false, deprecated: true },
        { name: 'v1', served: true, storage: true },
      ],
    },
    status: { storedVersions },
  };
}

function setup(count: number, storedVersions = ['v1alpha1', 'v1']) {
  const server = new FakeApiServer();
  server.seed(CRDS, crd(storedVersions));
  for (let i = 0; i < count; i++) server.seed(SITES, { metadata: { name: `w${i}` }, spec: { n: i } });
  return { server, api: new KubeApi(server) };
}

const patches = (server: FakeApiServer, path: string) =>
  server.requests.filter((r) => r.method === 'PATCH' && r.path.startsWith(path));
const noSleep = async () => {};

describe('migration: writing every object back at the storage version, then trimming storedVersions', () => {
  it('nothing to do when storedVersions holds the storage version alone: no list, no write', async () => {
    const { server, api } = setup(3, ['v1']);
    const result = await migrateStorage(api, { crdName: CRD, pageSize: 10 });
    expect(result.outcome).to.equal('nothing-to-do');
    expect(server.writes()).to.deep.equal([]);
    expect(server.requests.map((r) => r.path)).to.deep.equal([`${CRDS}/${CRD}`]);
  });

  it('patches each object with its own resourceVersion only, then sets storedVersions on /status under a precondition', async () => {
    const { server, api } = setup(3);
    const before = server.list<{ metadata: { name: string; resourceVersion: string } }>(SITES);
    const crdVersion = server.read<{ metadata: { resourceVersion: string } }>(CRDS, CRD)?.metadata.resourceVersion;
    const seen: Progress[] = [];
    const result = await migrateStorage(api, { crdName: CRD, pageSize: 10, onProgress: (p) => seen.push(p) });
    expect(result).to.include({ outcome: 'migrated' });
    expect(result.outcome === 'migrated' && result.storedVersions).to.deep.equal(['v1']);
    expect(patches(server, SITES).map((r) => [r.path, r.contentType, r.body])).to.deep.equal(
      before.map((o) => [
        `${SITES}/${o.metadata.name}`,
        MERGE_PATCH_CONTENT_TYPE,
        { metadata: { resourceVersion: o.metadata.resourceVersion } },
      ]),
    );
    expect(patches(server, CRDS).map((r) => [r.path, r.body])).to.deep.equal([
      [`${CRDS}/${CRD}/status`, { metadata: { resourceVersion: crdVersion }, status: { storedVersions: ['v1'] } }],
    ]);
    expect(seen).to.deep.equal([{ pages: 1, listed: 3, rewritten: 3, gone: 0, conflicts: 0 }]);
    expect(server.requests.find((r) => r.method === 'GET' && r.path === SITES)?.query).to.deep.equal({ limit: 10 });
  });

  it('a conflict re-reads the object and writes it again; an object deleted meanwhile counts as gone', async () => {
    const { server, api } = setup(3);
    server.failNext((r) => r.method === 'PATCH' && r.path === `${SITES}/w0`, { status: 409, reason: 'Conflict' });
    server.failNext((r) => r.method === 'PATCH' && r.path === `${SITES}/w1`, { status: 404, reason: 'NotFound' });
    const result = await migrateStorage(api, { crdName: CRD, pageSize: 10 });
    expect(result.outcome === 'migrated' && result.progress).to.deep.equal({
      pages: 1,
      listed: 3,
      rewritten: 2,
      gone: 1,
      conflicts: 1,
    });
    expect(patches(server, `${SITES}/w0`)).to.have.length(2);
    expect(server.requests.filter((r) => r.method === 'GET' && r.path === `${SITES}/w0`)).to.have.length(1);
  });

  it('a 429 is waited out and the same write sent again', async () => {
    const { server, api } = setup(1);
    server.failNext(
      (r) => r.method === 'PATCH' && r.path === `${SITES}/w0`,
      { status: 429, reason: 'TooManyRequests' },
      2,
    );
    let slept = 0;
    const sleep = async () => {
      slept++;
    };
    const result = await migrateStorage(api, { crdName: CRD, pageSize: 10, sleep });
    expect(result.outcome).to.equal('migrated');
    expect(slept).to.equal(2);
    expect(patches(server, `${SITES}/w0`)).to.have.length(3);
  });

  it('any other failure stops the run: a MigrationError with the progress and the server words, storedVersions untouched', async () => {
    const { server, api } = setup(4);
    const message = 'conversion webhook for example.com/v1alpha1, Kind=Widget failed: connection refused';
    server.failNext((r) => r.method === 'PATCH' && r.path === `${SITES}/w2`, {
      status: 500,
      reason: 'InternalError',
      message,
    });
    const error = await migrateStorage(api, { crdName: CRD, pageSize: 10, sleep: noSleep }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(MigrationError);
    const stopped = error as MigrationError;
    expect(stopped.message).to.equal(`PATCH ${SITES}/w2: HTTP 500 InternalError: ${message}`);
    expect(stopped.progress).to.include({ listed: 3, rewritten: 2 });
    expect(stopped.storedVersions).to.deep.equal(['v1alpha1', 'v1']);
    expect(patches(server, SITES)).to.have.length(3);
    expect(patches(server, CRDS)).to.deep.equal([]);
    expect(server.read<ReturnType<typeof crd>>(CRDS, CRD)?.status.storedVersions).to.deep.equal(['v1alpha1', 'v1']);
  });

  it('a CRD whose spec changed during the run (a new generation) keeps its storedVersions: run again', async () => {
    const { server, api } = setup(2);
    const onProgress = () => {
      server.modify<{ metadata: { generation?: number } }>(CRDS, CRD, (o) => {
        o.metadata.generation = 2;
      });
    };
    const error = await migrateStorage(api, { crdName: CRD, pageSize: 10, onProgress }).catch((e: unknown) => e);
    expect((error as Error).message).to.equal(
      `CustomResourceDefinition ${CRD} changed during the migration (generation 1 -> 2): run again`,
    );
    expect(patches(server, CRDS)).to.deep.equal([]);
  });

  it('an expired continue token (410) starts the listing over', async () => {
    const { server, api } = setup(2);
    server.failNext((r) => r.method === 'GET' && r.path === SITES, { status: 410, reason: 'Expired' });
    const result = await migrateStorage(api, { crdName: CRD, pageSize: 10 });
    expect(result.outcome).to.equal('migrated');
    expect(server.requests.filter((r) => r.method === 'GET' && r.path === SITES)).to.have.length(2);
  });
});

describe('cli: staticsite migrate-storage', () => {
  function command(server: FakeApiServer, args: string[]) {
    let stdout = '';
    const io: CommandIO = {
      stdout: (t) => {
        stdout += t;
      },
      stderr: () => {},
    };
    const deps = { kubeApi: async () => new KubeApi(server), signal: new AbortController().signal };
    const done = migrateStorageCommand(['--crd', CRD, ...args], io, deps);
    return {
      done,
      lines: () =>
        stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>),
    };
  }

  it('--dry-run: one JSON line with storedVersions and the count, and no write', async () => {
    const { server } = setup(3);
    const run = command(server, ['--dry-run']);
    expect(await run.done).to.equal(0);
    expect(run.lines()).to.deep.equal([
      {
        event: 'dry-run',
        crd: CRD,
        storageVersion: 'v1',
        storedVersions: ['v1alpha1', 'v1'],
        servedVersions: ['v1alpha1', 'v1'],
        deprecatedVersions: ['v1alpha1'],
        retire: ['v1alpha1'],
        objects: 3,
        msg: 'would write back 3 objects at v1, then set status.storedVersions to [v1]',
      },
    ]);
    expect(server.writes()).to.deep.equal([]);
  });

  it('a page line per page, then done with the new storedVersions', async () => {
    const { server } = setup(2);
    const run = command(server, ['--qps', '0']);
    expect(await run.done).to.equal(0);
    expect(run.lines().map((l) => [l.event, l.rewritten, l.storedVersions])).to.deep.equal([
      ['page', 2, undefined],
      ['done', 2, ['v1']],
    ]);
  });

  it('a stopped run: a stopped line, then an error saying what was done and what was left', async () => {
    const { server } = setup(2);
    server.failNext((r) => r.method === 'PATCH' && r.path === `${SITES}/w1`, {
      status: 500,
      reason: 'InternalError',
      message: 'conversion webhook failed',
    });
    const run = command(server, []);
    const error = await run.done.catch((e: unknown) => e);
    expect((error as Error).message).to.equal(
      `stopped after writing back 1 of the 2 objects seen: PATCH ${SITES}/w1: HTTP 500 InternalError: conversion webhook failed; status.storedVersions left at [v1alpha1, v1]; fix the cause and run again`,
    );
    expect(run.lines().at(-1)).to.include({ event: 'stopped', rewritten: 1, listed: 2 });
  });

  it('a --qps or --page-size that is no whole number is a usage error', async () => {
    const { server } = setup(0);
    for (const args of [
      ['--qps', '1.5'],
      ['--page-size', '0'],
    ]) {
      const error = await command(server, args).done.catch((e: unknown) => e);
      expect((error as Error).name, args.join(' ')).to.equal('UsageError');
    }
  });
});
