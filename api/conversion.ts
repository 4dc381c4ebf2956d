import { stringifyJson } from '../crd/json-int64.ts';
import { API_VERSION_V1, API_VERSION_V1ALPHA1, HOSTNAME_ANNOTATION } from './constants.ts';
import type { ObjectMeta, StaticSiteV1, StaticSiteV1alpha1 } from './types.ts';

/** An object whose apiVersion this package cannot convert, or whose shape is not a StaticSite. */
export class ConversionError extends Error {
  override name = 'ConversionError';
}

function withAnnotation(meta: ObjectMeta, key: string, value: string | undefined): ObjectMeta {
  const annotations = { ...(meta.annotations ?? {}) };
  if (value === undefined) delete annotations[key];
  else annotations[key] = value;
  const next: ObjectMeta = { ...meta, annotations };
  if (Object.keys(annotations).length === 0) delete next.annotations;
  return next;
}

/** v1 -> v1alpha1: `spec.hostname` moves into the `staticsite.dev/hostname` annotation. */
export function toV1alpha1(site: StaticSiteV1): StaticSiteV1alpha1 {
  const { hostname, ...spec } = site.spec;
  const out: StaticSiteV1alpha1 = {
    ...site,
    apiVersion: API_VERSION_V1ALPHA1,
    metadata: hostname === undefined ? site.metadata : withAnnotation(site.metadata, HOSTNAME_ANNOTATION, hostname),
    spec,
  };
  return out;
}

/** v1alpha1 -> v1: the `staticsite.dev/hostname` annotation, when present, becomes `spec.hostname`. */
export function toV1(site: StaticSiteV1alpha1): StaticSiteV1 {
  const hostname = site.metadata.annotations?.[HOSTNAME_ANNOTATION];
  const out: StaticSiteV1 = {
    ...site,
    apiVersion: API_VERSION_V1,
    metadata: hostname === undefined ? site.metadata : withAnnotation(site.metadata, HOSTNAME_ANNOTATION, undefined),
    spec: hostname === undefined ? { ...site.spec } : { ...site.spec, hostname },
  };
  return out;
}

/** A JSON object: not null, not an array. */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The fields conversion reads, of the types it reads them as: anything else is refused, never coerced. */
function checkReadFields(object: Record<string, unknown>): void {
  const metadata = object.metadata as Record<string, unknown>;
  const annotations = metadata.annotations;
  if (annotations !== undefined && annotations !== null) {
    if (!isRecord(annotations) || Object.values(annotations).some((v) => typeof v !== 'string')) {
      throw new ConversionError('metadata.annotations is not an object of strings');
    }
  }
  const hostname = (object.spec as Record<string, unknown>).hostname;
  if (hostname !== undefined && typeof hostname !== 'string')
    throw new ConversionError('spec.hostname is not a string');
}

/**
 * Converts any StaticSite object to the desired apiVersion. Fields this package does not know
 * are carried through untouched, so a newer client's data survives a conversion.
 */
export function convertStaticSite(object: unknown, desiredAPIVersion: string): StaticSiteV1 | StaticSiteV1alpha1 {
  if (!isRecord(object)) throw new ConversionError('object is not a JSON object');
  if (object.kind !== 'StaticSite') throw new ConversionError(`unexpected kind ${stringifyJson(object.kind)}`);
  if (!isRecord(object.metadata)) throw new ConversionError('object has no metadata');
  if (!isRecord(object.spec)) throw new ConversionError('object has no spec');
  const from = object.apiVersion;
  if (from !== API_VERSION_V1 && from !== API_VERSION_V1ALPHA1) {
    throw new ConversionError(`unsupported apiVersion ${stringifyJson(from)}`);
  }
  if (desiredAPIVersion !== API_VERSION_V1 && desiredAPIVersion !== API_VERSION_V1ALPHA1) {
    throw new ConversionError(`unsupported desiredAPIVersion ${stringifyJson(desiredAPIVersion)}`);
  }
  if (from === desiredAPIVersion) return object as unknown as StaticSiteV1 | StaticSiteV1alpha1;
  checkReadFields(object);
  return desiredAPIVersion === API_VERSION_V1
    ? toV1(object as unknown as StaticSiteV1alpha1)
    : toV1alpha1(object as unknown as StaticSiteV1);
}

/** The v1 `spec.hostname` of a StaticSite of any served version; undefined when it has none or is no StaticSite. */
export function specHostname(object: unknown): string | undefined {
  try {
    return (convertStaticSite(object, API_VERSION_V1) as StaticSiteV1).spec.hostname;
  } catch {
    return undefined;
  }
}
