import { isIP } from 'node:net';
import { CertsError } from './errors.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_NAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The names a client may use to reach the webhook Service: `<svc>`, `<svc>.<ns>`, `<svc>.<ns>.svc`,
 * `<svc>.<ns>.svc.cluster.local`, then each extra SAN (a DNS name or an IP address), without repeats.
 */
export function serviceSans(service: string, namespace: string, extra: readonly string[] = []): string[] {
  for (const [what, value] of [
    ['--service', service],
    ['--namespace', namespace],
  ] as const) {
    if (!DNS_LABEL.test(value) || value.length > 63) {
      throw new CertsError(
        'InvalidInput',
        `${what} "${value}" is not a DNS-1123 label (lowercase letters, digits and '-', at most 63 characters)`,
      );
    }
  }
  const names = [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
  ];
  for (const raw of extra) {
    const san = isIP(raw) ? canonicalIp(raw) : raw.toLowerCase();
    if (!isIP(san) && (!DNS_NAME.test(san) || san.length > 253)) {
      throw new CertsError('InvalidInput', `--san "${raw}" is neither an IP address nor a DNS name`);
    }
    if (!names.includes(san)) names.push(san);
  }
  return names;
}

/** The textual form Node prints for an IP SAN (IPv6 expanded the way OpenSSL does). */
export function canonicalIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const url = new URL(`http://[${ip}]/`);
  return url.hostname.slice(1, -1);
}

/** Compares two SAN lists as sets. */
export function sameSans(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a.map(normalizeSan));
  const right = new Set(b.map(normalizeSan));
  return left.size === right.size && [...left].every((x) => right.has(x));
}

function normalizeSan(san: string): string {
  return isIP(san) ? ipKey(san) : san.toLowerCase();
}

/** A comparable key for an IP: the 16 (or 4) bytes in hex. */
function ipKey(ip: string): string {
  if (isIP(ip) === 4) return `ip4:${ip}`;
  const full = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const [head = '', tail = ''] = full.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = full.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  return `ip6:${groups.map((g) => g.padStart(4, '0')).join(':')}`;
}
