import type { Logger } from 'pino';
import type { Clock } from '../clock/clock.ts';
import { type CertsConfig, CLOCK_SKEW_MS, DAY_MS, keySpecFor } from './config.ts';
import { CertsError, isCertsError } from './errors.ts';
import type { BundleInjector, InjectionResult } from './injector.ts';
import type { CertsMetrics } from './metrics.ts';
import { bundlePem, type CertInfo, keyMatches, parseCertificate, parseCertificates, parsePrivateKey } from './pem.ts';
import {
  type BundleDecision,
  caRotationReason,
  type LeafState,
  nextBundle,
  renewalTime,
  servingRenewalReason,
} from './plan.ts';
import { serviceSans } from './sans.ts';
import {
  type CertStore,
  MATERIAL_KEYS,
  type MaterialKind,
  PAIR_KEYS,
  type StoredCa,
  type StoredServing,
} from './store.ts';
import { createCertificateAuthority, generateKeyPem, issueCertificate, type KeySpec } from './x509.ts';

export interface BootstrapDeps {
  store: CertStore;
  /** Absent in directory-only runs: nothing to inject. */
  injector?: BundleInjector;
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'debug'>;
  metrics?: CertsMetrics;
  /** Makes a private key (PEM). Default: Node's native generator. Tests inject pre-made keys. */
  generateKey?: (spec: KeySpec) => Promise<string>;
}

export type BootstrapAction =
  | 'ca-created'
  | 'ca-rotated'
  | 'ca-bundle-pruned'
  | 'ca-stored'
  | 'bundle-injected'
  | 'serving-issued'
  | 'serving-stored';

export interface BootstrapResult {
  /** True if anything was written (a store or an injection patch). */
  changed: boolean;
  actions: BootstrapAction[];
  ca: CertInfo;
  serving: CertInfo;
  /** The CA bundle as injected: old CAs first, the current CA last. */
  bundle: CertInfo[];
  injected: InjectionResult[];
  /** When something next falls due (renewal threshold or the end of a CA overlap). */
  nextDue: Date;
}

interface CurrentCa {
  cert: CertInfo;
  keyPem: string;
  /** Every certificate of the stored bundle (the current CA among them). */
  bundle: CertInfo[];
}

/**
 * One pass of the bootstrapper: make sure a CA and a serving certificate exist, are valid for the
 * wanted SANs and are not due; store them; inject the bundle. Order matters for rotation: the new CA
 * is stored and injected (next to the old one) before any serving cert it signs is stored, so the API
 * server trusts a new serving cert before a webhook can load it. A second run with nothing due
 * writes nothing.
 */
export async function bootstrap(config: CertsConfig, deps: BootstrapDeps): Promise<BootstrapResult> {
  try {
    const result = await bootstrapOnce(config, deps);
    deps.metrics?.runs.inc({ outcome: 'ok' });
    deps.metrics?.lastSuccess.set(deps.clock.now() / 1000);
    return result;
  } catch (error) {
    deps.metrics?.runs.inc({ outcome: isCertsError(error) ? error.code : 'Error' });
    throw error;
  }
}

/** What every step of one pass reads, and the actions it has taken so far. */
interface Pass {
  config: CertsConfig;
  deps: BootstrapDeps;
  generateKey: (spec: KeySpec) => Promise<string>;
  sans: string[];
  now: Date;
  actions: BootstrapAction[];
}

interface Leaf {
  cert: CertInfo;
  keyPem: string;
}

async function bootstrapOnce(config: CertsConfig, deps: BootstrapDeps): Promise<BootstrapResult> {
  const { store, logger } = deps;
  const generateKey = deps.generateKey ?? generateKeyPem;
  const sans = serviceSans(config.service, config.namespace, config.extraSans);
  const actions: BootstrapAction[] = [];
  const [storedCa, storedServing] = await Promise.all([store.loadCa(), store.loadServing()]);
  const pass: Pass = { config, deps, generateKey, sans, now: new Date(deps.clock.now()), actions };

  // 1. The CA: keep it, or make a new one (first run, due, expired, forced).
  const existing = parseCa(storedCa, store);
  const serving = parseServing(storedServing, store);
  const ca = await currentCa(pass, existing);

  // 2. The bundle: current CA plus old CAs still in their overlap (from either store).
  const candidates = [...ca.bundle, ...(serving?.bundle ?? [])].filter((c) => c.fingerprint !== ca.cert.fingerprint);
  const decision = nextBundle({
    candidates,
    current: ca.cert,
    liveLeaf: serving?.leaf.cert,
    now: pass.now,
    overlapMs: config.caOverlapMs,
  });
  for (const { cert, reason } of decision.dropped) {
    if (!ca.bundle.some((c) => c.fingerprint === cert.fingerprint)) continue; // never stored by us: not a prune
    actions.push('ca-bundle-pruned');
    logger.info({ event: 'ca-bundle-pruned', ca: cert.x509.subject, reason }, 'dropped an old CA from the bundle');
  }
  const bundle = bundlePem(decision.bundle);
  if (await store.saveCa({ bundlePem: bundle, keyPem: ca.keyPem })) actions.push('ca-stored');

  // 3. Inject before a serving cert signed by a new CA is stored.
  const injected = deps.injector ? await deps.injector.inject(bundle) : [];
  for (const r of injected.filter((x) => x.patched.length > 0)) {
    actions.push('bundle-injected');
    logger.info({ event: 'bundle-injected', object: r.object, entries: r.patched }, 'injected the CA bundle');
  }

  // 4. The serving cert.
  const leaf = await currentLeaf(pass, ca, serving);
  if (await store.saveServing({ certPem: leaf.cert.pem, keyPem: leaf.keyPem, caPem: bundle })) {
    actions.push('serving-stored');
  }
  return summary(pass, { ca, leaf, decision, injected });
}

/** The stored CA, or a new one when it is missing, due, expired or its rotation forced. */
async function currentCa(pass: Pass, existing: CurrentCa | undefined): Promise<CurrentCa> {
  const { config, deps, now } = pass;
  const rotation = caRotationReason(existing?.cert, now, config);
  if (!rotation) return existing as CurrentCa;
  const ca = await newCa(config, now, pass.generateKey, existing?.bundle ?? []);
  pass.actions.push(existing ? 'ca-rotated' : 'ca-created');
  deps.metrics?.issued.inc({ cert: 'ca' });
  deps.logger.info(
    { event: existing ? 'ca-rotated' : 'ca-created', reason: rotation, notAfter: ca.cert.notAfter.toISOString() },
    existing ? 'rotating the CA' : 'created a CA',
  );
  return ca;
}

/** The stored serving cert, or a new one signed by `ca` when it is missing, due or no longer fits. */
async function currentLeaf(pass: Pass, ca: CurrentCa, serving: ParsedServing | undefined): Promise<Leaf> {
  const { config, deps, sans, now } = pass;
  const renewal = servingRenewalReason(serving?.leaf, { ca: ca.cert, sans }, now, config);
  if (!renewal) return { cert: (serving as ParsedServing).leaf.cert, keyPem: (serving as ParsedServing).keyPem };
  const leaf = await newLeaf(pass, ca);
  pass.actions.push('serving-issued');
  deps.metrics?.issued.inc({ cert: 'serving' });
  deps.logger.info(
    { event: 'serving-issued', reason: renewal, sans, notAfter: leaf.cert.notAfter.toISOString() },
    'issued a serving certificate',
  );
  return leaf;
}

/** The gauges, the closing log line and the result of a pass. */
function summary(
  pass: Pass,
  outcome: { ca: CurrentCa; leaf: Leaf; decision: BundleDecision; injected: InjectionResult[] },
): BootstrapResult {
  const { config, deps, actions } = pass;
  const { ca, leaf, decision, injected } = outcome;
  const dues = [renewalTime(leaf.cert, config.renewFraction), renewalTime(ca.cert, config.renewFraction)];
  if (decision.nextDrop) dues.push(decision.nextDrop);
  const nextDue = new Date(Math.min(...dues.map((d) => d.getTime())));
  deps.metrics?.expiry.set({ cert: 'ca' }, ca.cert.notAfter.getTime() / 1000);
  deps.metrics?.expiry.set({ cert: 'serving' }, leaf.cert.notAfter.getTime() / 1000);
  deps.metrics?.bundleSize.set(decision.bundle.length);
  const changed = actions.some((a) => a === 'ca-stored' || a === 'bundle-injected' || a === 'serving-stored');
  deps.logger.info(
    {
      event: 'bootstrap-done',
      changed,
      actions,
      caNotAfter: ca.cert.notAfter.toISOString(),
      servingNotAfter: leaf.cert.notAfter.toISOString(),
      bundle: decision.bundle.length,
      nextDue: nextDue.toISOString(),
    },
    changed ? 'certificates updated' : 'certificates up to date',
  );
  return { changed, actions, ca: ca.cert, serving: leaf.cert, bundle: decision.bundle, injected, nextDue };
}

/** An empty value counts as absent: a Secret created ahead of time with empty `tls.crt`/`tls.key` is filled in. */
function present(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * The certificate and key of `kind` as stored (an empty value counts as absent): none while neither
 * is there; one without the other is corrupt.
 */
function storedPair(
  store: CertStore,
  kind: MaterialKind,
  certPem: string | undefined,
  keyPem: string | undefined,
): { certPem: string; keyPem: string } | undefined {
  const [cert, key] = [present(certPem), present(keyPem)];
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) {
    const names = PAIR_KEYS[kind];
    const [missing, found] = cert === undefined ? [names.cert, names.key] : [names.key, names.cert];
    throw new CertsError(
      'CorruptPem',
      `${store.where(kind, missing)} is missing while ${store.where(kind, found)} exists. ${store.remedy(kind)}`,
    );
  }
  return { certPem: cert, keyPem: key };
}

function parseCa(stored: StoredCa | undefined, store: CertStore): CurrentCa | undefined {
  const pair = stored && storedPair(store, 'ca', stored.bundlePem, stored.keyPem);
  if (!pair) return undefined;
  const fix = store.remedy('ca');
  const { keyPem } = pair;
  const [bundleAt, keyAt] = [store.where('ca', PAIR_KEYS.ca.cert), store.where('ca', PAIR_KEYS.ca.key)];
  const bundle = parseCertificates(pair.certPem, bundleAt, fix);
  const key = parsePrivateKey(keyPem, keyAt, fix);
  const matching = bundle.filter((c) => c.isCa && keyMatches(c, key));
  if (matching.length === 0) {
    throw new CertsError(
      'KeyMismatch',
      `${keyAt} belongs to none of the ${bundle.length} CA certificate(s) in ${bundleAt}. ${fix}`,
    );
  }
  const cert = matching.reduce((a, b) => (b.notAfter.getTime() > a.notAfter.getTime() ? b : a));
  return { cert, keyPem, bundle };
}

interface ParsedServing {
  leaf: LeafState;
  keyPem: string;
  bundle: CertInfo[];
}

function parseServing(stored: StoredServing | undefined, store: CertStore): ParsedServing | undefined {
  const pair = stored && storedPair(store, 'serving', stored.certPem, stored.keyPem);
  if (!pair) return undefined;
  const fix = store.remedy('serving');
  const { keyPem } = pair;
  const caPem = present(stored?.caPem);
  const cert = parseCertificate(pair.certPem, store.where('serving', PAIR_KEYS.serving.cert), fix);
  const key = parsePrivateKey(keyPem, store.where('serving', PAIR_KEYS.serving.key), fix);
  const bundleAt = store.where('serving', MATERIAL_KEYS.serving.caPem);
  const bundle = caPem === undefined ? [] : parseCertificates(caPem, bundleAt, fix);
  return { leaf: { cert, key }, keyPem, bundle };
}

async function newCa(
  config: CertsConfig,
  now: Date,
  generateKey: (spec: KeySpec) => Promise<string>,
  previous: CertInfo[],
): Promise<CurrentCa> {
  const keyPem = await generateKey(keySpecFor(config, 'ca'));
  const { certPem } = createCertificateAuthority({
    commonName: `${config.service.slice(0, 40)}-ca@${Math.floor(now.getTime() / 1000)}`,
    notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
    notAfter: new Date(now.getTime() + config.caValidityDays * DAY_MS),
    validityDays: config.caValidityDays,
    keyPem,
  });
  const cert = parseCertificate(certPem, 'the new CA', '');
  return { cert, keyPem, bundle: [...previous, cert] };
}

async function newLeaf(pass: Pass, ca: CurrentCa): Promise<Leaf> {
  const { config, sans, now } = pass;
  const keyPem = await pass.generateKey(keySpecFor(config, 'serving'));
  const fqdn = `${config.service}.${config.namespace}.svc`;
  const notAfter = Math.min(now.getTime() + config.servingValidityDays * DAY_MS, ca.cert.notAfter.getTime());
  const { certPem } = issueCertificate({
    ca: { certPem: ca.cert.pem, keyPem: ca.keyPem },
    commonName: fqdn.length <= 64 ? fqdn : config.service,
    subjectAltNames: sans,
    usage: 'serverAuth',
    notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
    notAfter: new Date(notAfter),
    validityDays: config.servingValidityDays,
    keyPem,
  });
  return { cert: parseCertificate(certPem, 'the new serving certificate', ''), keyPem };
}
