/**
 * RFC 3339 date-time handling for CEL timestamps (strfmt "date-time" as the API server accepts it).
 * Source: k8s.io/kube-openapi strfmt/time.go (ParseDateTime layouts).
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function isValidDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  if (!m) return false;
  return !Number.isNaN(new Date(s.replace(' ', 'T')).getTime());
}
