// The development environment (devenv/) loads inside each subcommand's run, by import(): `local --help` and
// every production command load none of it (test/e2e/cli-loads.test.ts, test/unit/layout.test.ts).
import { DEFAULT_BASE_DOMAIN } from '../api/index.ts';
import { CommandLine, helpOf, port, usageOf } from './flags.ts';
import type { CommandIO } from './usage.ts';

const LOCAL = new CommandLine('local', {
  dns: { type: 'boolean', default: false, help: 'publish the records in a local BIND 9 as well' },
  gateway: {
    type: 'boolean',
    default: false,
    help: 'serve each site by its hostname through a local Gateway (Traefik on 127.0.0.1:8000)',
  },
  'no-sample': { type: 'boolean', default: false, help: 'start no sample site' },
  'exit-after-sample': { type: 'boolean', default: false, help: 'stop once the sample site is served' },
});
const PKI = new CommandLine('local pki', {
  dir: { type: 'string', value: 'DIR', required: true, help: "where the control plane's PKI and kubeconfig go" },
  server: { type: 'string', default: 'https://127.0.0.1:6443', value: 'URL', help: "the kubeconfig's API server" },
});
const DNS_CONFIG = new CommandLine('local dns-config', {
  dir: { type: 'string', value: 'DIR', required: true, help: "where BIND 9's configuration, zone and TSIG key go" },
  port: { type: 'string', default: '8053', help: 'the port BIND 9 listens on' },
});
const SIMULATE_NODES = new CommandLine('local simulate-nodes', {
  kubeconfig: { type: 'string', value: 'F', required: true, help: 'the control plane to bind and ready pods in' },
});
const LINES = [LOCAL, PKI, DNS_CONFIG, SIMULATE_NODES];

export const usage = usageOf(LINES);
export const help = helpOf(LINES);

/** `staticsite local pki`: the control plane's PKI and an admin kubeconfig, for docker-compose. */
async function pkiCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = PKI.parse(args);
  const { writeLocalPki } = await import('../devenv/local-commands.ts');
  io.stdout(`${await writeLocalPki(values.dir, values.server)}\n`);
  return 0;
}

/** `staticsite local dns-config`: BIND 9's configuration, zone and TSIG key, for docker-compose. */
async function dnsConfigCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = DNS_CONFIG.parse(args);
  const { writeLocalDnsConfig } = await import('../devenv/local-commands.ts');
  io.stdout(`${await writeLocalDnsConfig(values.dir, port('--port', values.port))}\n`);
  return 0;
}

/** `staticsite local simulate-nodes`: what a kubelet would do, for a control plane without nodes. */
async function simulateNodesCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = SIMULATE_NODES.parse(args);
  const { simulateNodes } = await import('../devenv/local-commands.ts');
  await simulateNodes(
    values.kubeconfig,
    () => io.stdout('node simulator running: pods are bound to a fake node and marked Ready\n'),
    untilSignal(),
  );
  return 0;
}

function untilSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

/** `staticsite local`: the whole system on this machine, until Ctrl-C. */
export async function localCommand(args: string[], io: CommandIO): Promise<number> {
  if (args[0] === 'pki') return pkiCommand(args.slice(1), io);
  if (args[0] === 'simulate-nodes') return simulateNodesCommand(args.slice(1), io);
  if (args[0] === 'dns-config') return dnsConfigCommand(args.slice(1), io);
  const { values } = LOCAL.parse(args);
  const [{ showSample }, { LocalSystem }, { gatewayCurl }] = await Promise.all([
    import('../devenv/local-commands.ts'),
    import('../devenv/local-system.ts'),
    import('../devenv/local-gateway.ts'),
  ]);
  const say = (line: string) => io.stdout(`${line}\n`);
  const system = new LocalSystem({ log: say, dns: values.dns, gateway: values.gateway });
  await system.start();
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= system.stop();
    return stopping;
  };
  try {
    const sample = values['no-sample'] ? `NAME.NAMESPACE.${DEFAULT_BASE_DOMAIN}` : await showSample(system, say);
    const cp = system.controlPlane;
    say(
      [
        '',
        'everything is running. Try:',
        `  export KUBECONFIG=${cp.kubeconfigPath} PATH=${cp.binDir}:$PATH`,
        '  kubectl get staticsites -A',
        ...(system.dns ? [`  dig @127.0.0.1 -p ${system.dns.port} hello.demo.${system.dns.zone}`] : []),
        ...(system.gateway ? [`  ${gatewayCurl(sample)}`] : []),
        `logs: ${cp.dir}/*.log`,
        'Ctrl-C stops every process and removes the temp dir.',
      ].join('\n'),
    );
    if (values['exit-after-sample']) return 0;
    await untilSignal();
    say('stopping...');
    return 0;
  } finally {
    await stop();
  }
}

export { localCommand as run };
