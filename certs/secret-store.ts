import type { KubeApi } from '../kube/api-client.ts';
import { type ApiError, apiErrorOrThrow, isNotFound, statusMessage } from '../kube/api-error.ts';
import type { KubeObject } from '../kube/objects.ts';
import { SECRETS } from '../kube/resources.ts';
import { CertsError } from './errors.ts';
import {
  type CertStore,
  keyedMaterial,
  type MaterialKind,
  materialFrom,
  type StoredCa,
  type StoredServing,
} from './store.ts';

export const SERVING_SECRET_TYPE = 'kubernetes.io/tls';
export const CA_SECRET_TYPE = 'Opaque';
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'staticsite-certs' };
export const RBAC_FILE = 'manifests/certs/certs-rbac.yaml';

interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

interface Snapshot {
  resourceVersion?: string;
  data: Record<string, string>;
}

/**
 * Certificates in two Secrets of one namespace: the serving Secret (type `kubernetes.io/tls`:
 * `tls.crt`, `tls.key`, `ca.crt`) that the webhook mounts, and the CA Secret (type `Opaque`:
 * `ca.crt`, `ca.key`) that only the bootstrapper reads, so a webhook pod never holds the CA key.
 * Writes are merge patches of `data` guarded by the resourceVersion that was read: labels,
 * annotations and other keys stay as they are, and a concurrent writer makes this one fail with
 * Conflict instead of being overwritten.
 */
export class SecretStore implements CertStore {
  readonly namespace: string;
  readonly servingName: string;
  readonly caName: string;
  private readonly api: KubeApi;
  private readonly snapshots = new Map<string, Snapshot | null>();

  constructor(api: KubeApi, namespace: string, servingName: string, caName = `${servingName}-ca`) {
    this.api = api;
    this.namespace = namespace;
    this.servingName = servingName;
    this.caName = caName;
  }

  private nameOf(kind: MaterialKind): string {
    return kind === 'ca' ? this.caName : this.servingName;
  }

  private object(name: string): string {
    return `Secret ${this.namespace}/${name}`;
  }

  where(kind: MaterialKind, key: string): string {
    return `${this.object(this.nameOf(kind))} key ${key}`;
  }

  remedy(kind: MaterialKind): string {
    const name = this.nameOf(kind);
    const then =
      kind === 'ca'
        ? 'a new CA is issued and its bundle injected (the old CA cert stays trusted while it is still in the serving Secret)'
        : 'a new serving certificate is issued';
    return `Delete it (kubectl -n ${this.namespace} delete secret ${name}) and run bootstrap again: ${then}.`;
  }

  async loadCa(): Promise<StoredCa | undefined> {
    const data = await this.load(this.caName, CA_SECRET_TYPE);
    return data && materialFrom('ca', (key) => data[key]);
  }

  async loadServing(): Promise<StoredServing | undefined> {
    const data = await this.load(this.servingName, SERVING_SECRET_TYPE);
    return data && materialFrom('serving', (key) => data[key]);
  }

  saveCa(ca: Required<StoredCa>): Promise<boolean> {
    return this.save(this.caName, CA_SECRET_TYPE, keyedMaterial('ca', ca));
  }

  saveServing(serving: Required<StoredServing>): Promise<boolean> {
    return this.save(this.servingName, SERVING_SECRET_TYPE, keyedMaterial('serving', serving));
  }

  /** The decoded data of a Secret, or undefined if it does not exist. */
  private async load(name: string, type: string): Promise<Record<string, string> | undefined> {
    let secret: Secret;
    try {
      secret = await this.api.get<Secret>(SECRETS, this.namespace, name);
    } catch (error) {
      if (isNotFound(error)) {
        this.snapshots.set(name, null);
        return undefined;
      }
      throw this.apiError('get', name, apiErrorOrThrow(error));
    }
    const actual = secret.type ?? 'Opaque';
    if (actual !== type) {
      throw new CertsError(
        'WrongSecretType',
        `${this.object(name)} has type "${actual}", but bootstrap stores ${type === SERVING_SECRET_TYPE ? 'the serving certificate' : 'the CA'} in a Secret of type "${type}". ` +
          `A Secret's type cannot be changed: delete it (kubectl -n ${this.namespace} delete secret ${name}) or choose another name with ${type === SERVING_SECRET_TYPE ? '--secret' : '--ca-secret'}.`,
      );
    }
    const data: Record<string, string> = {};
    for (const [key, value] of Object.entries(secret.data ?? {}))
      data[key] = Buffer.from(value, 'base64').toString('utf8');
    this.snapshots.set(name, { ...optional('resourceVersion', secret.metadata.resourceVersion), data });
    return data;
  }

  private async save(name: string, type: string, wanted: Record<string, string>): Promise<boolean> {
    if (!this.snapshots.has(name)) await this.load(name, type);
    const snapshot = this.snapshots.get(name);
    const encoded = Object.fromEntries(Object.entries(wanted).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    if (!snapshot) {
      let created: Secret;
      try {
        created = await this.api.create<Secret>(SECRETS, this.namespace, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: this.namespace, labels: MANAGED_BY },
          type,
          data: encoded,
        });
      } catch (error) {
        throw this.apiError('create', name, apiErrorOrThrow(error));
      }
      this.snapshots.set(name, {
        ...optional('resourceVersion', created.metadata.resourceVersion),
        data: { ...wanted },
      });
      return true;
    }
    const changed = Object.keys(wanted).filter((k) => snapshot.data[k] !== wanted[k]);
    if (changed.length === 0) return false;
    const patch = {
      metadata: { resourceVersion: snapshot.resourceVersion },
      data: Object.fromEntries(changed.map((k) => [k, encoded[k]])),
    };
    let patched: Secret;
    try {
      patched = await this.api.mergePatch<Secret>(SECRETS, this.namespace, name, { patch });
    } catch (error) {
      throw this.apiError('patch', name, apiErrorOrThrow(error));
    }
    this.snapshots.set(name, {
      ...optional('resourceVersion', patched.metadata.resourceVersion),
      data: { ...snapshot.data, ...wanted },
    });
    return true;
  }

  private apiError(verb: string, name: string, error: ApiError): CertsError {
    const server = statusMessage(error);
    const object = this.object(name);
    this.snapshots.delete(name);
    if (error.code === 403) {
      return new CertsError(
        'Forbidden',
        `cannot ${verb} ${object}: ${server}. Bind the bootstrapper's ServiceAccount to the Role in ${RBAC_FILE} ` +
          `(get and patch on Secrets ${this.servingName} and ${this.caName}, create on Secrets, in namespace ${this.namespace}).`,
      );
    }
    if (error.code === 409) {
      return new CertsError(
        'Conflict',
        `cannot ${verb} ${object}: ${server}. Another writer changed it at the same time; run bootstrap again (--watch retries by itself).`,
      );
    }
    if (error.code === 404) {
      return new CertsError(
        'NotFound',
        `cannot ${verb} ${object}: ${server}. Create namespace ${this.namespace} first, or pass the right --namespace.`,
      );
    }
    return new CertsError('ApiError', `cannot ${verb} ${object}: HTTP ${error.code}: ${server}`);
  }
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}
