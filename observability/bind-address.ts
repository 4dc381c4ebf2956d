/** Where a server listens: a host (undefined: every interface) and a port. */
export interface BindAddress {
  host?: string;
  port: number;
}

/**
 * controller-runtime's bind-address flags (`--metrics-bind-address`, `--health-probe-bind-address`):
 * `HOST:PORT`, `:PORT` for every interface, `[IPV6]:PORT`, or `0` to serve nothing. Undefined when
 * the value is none of these.
 */
export function parseBindAddress(value: string): BindAddress | 'off' | undefined {
  if (value === '0') return 'off';
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port > 65535) return undefined;
  const host = match[1] ?? match[2];
  return host ? { host, port } : { port };
}

export function bindAddressProblem(flag: string, value: string): string {
  return `${flag} must be HOST:PORT (":8080", "127.0.0.1:8080", "[::1]:8080") or 0, not ${JSON.stringify(value)}`;
}
