import { expect } from 'chai';
import { observabilityAddresses } from '../../cli/observability-flags.ts';
import { parseBindAddress } from '../../observability/bind-address.ts';

describe('cli: --metrics-bind-address and --health-probe-bind-address (controller-runtime forms)', () => {
  it('parses HOST:PORT, :PORT, [IPv6]:PORT and 0', () => {
    expect(parseBindAddress('127.0.0.1:8080')).to.deep.equal({ host: '127.0.0.1', port: 8080 });
    expect(parseBindAddress(':8443')).to.deep.equal({ port: 8443 });
    expect(parseBindAddress('[::1]:9090')).to.deep.equal({ host: '::1', port: 9090 });
    expect(parseBindAddress('localhost:0')).to.deep.equal({ host: 'localhost', port: 0 });
    expect(parseBindAddress('0')).to.equal('off');
    for (const bad of ['8080', ':', ':65536', '::1:80', 'a:b', '1.2.3.4:80:90', '']) {
      expect(parseBindAddress(bad), bad).to.equal(undefined);
    }
  });

  it('falls back to --metrics-port and the process host, and reads a host alone as the old flag did', () => {
    const legacy = { host: '0.0.0.0', port: 8081 };
    expect(observabilityAddresses({}, legacy)).to.deep.equal({ metrics: legacy });
    expect(observabilityAddresses({ 'metrics-bind-address': '127.0.0.1' }, legacy)).to.deep.equal({
      metrics: { host: '127.0.0.1', port: 8081 },
    });
    expect(
      observabilityAddresses({ 'metrics-bind-address': ':9000', 'health-probe-bind-address': ':8082' }, legacy),
    ).to.deep.equal({ metrics: { port: 9000 }, probes: { port: 8082 } });
    expect(
      observabilityAddresses({ 'metrics-bind-address': '0', 'health-probe-bind-address': '127.0.0.1:8082' }, legacy),
    ).to.deep.equal({ metrics: 'off', probes: { host: '127.0.0.1', port: 8082 } });
  });

  it('refuses what it cannot read, and a metrics server turned off with nowhere left for the probes', () => {
    const legacy = { port: 8080 };
    expect(() => observabilityAddresses({ 'metrics-bind-address': ':99999' }, legacy)).to.throw(
      '--metrics-bind-address must be HOST:PORT (":8080", "127.0.0.1:8080", "[::1]:8080") or 0, not ":99999"',
    );
    // A port alone is neither form (controller-runtime wants ":8080"), not a host named 8080.
    expect(() => observabilityAddresses({ 'metrics-bind-address': '8080' }, legacy)).to.throw(
      '--metrics-bind-address must be HOST:PORT (":8080", "127.0.0.1:8080", "[::1]:8080") or 0, not "8080"',
    );
    expect(() => observabilityAddresses({ 'health-probe-bind-address': 'localhost' }, legacy)).to.throw(
      '--health-probe-bind-address must be HOST:PORT',
    );
    expect(() => observabilityAddresses({ 'metrics-bind-address': '0' }, legacy)).to.throw(
      '--metrics-bind-address 0 turns off the server that answers the probes too: give --health-probe-bind-address',
    );
  });
});
