import { parseArgs } from 'node:util';
import { showSample, simulateNodes, writeLocalDnsConfig, writeLocalPki } from '../devenv/local-commands.ts';
import { LocalSystem } from '../devenv/local-system.ts';
import { type CommandIO, UsageError } from './usage.ts';

export const localUsage =
  'staticsite local [--dns] [--no-sample] [--exit-after-sample] | local pki --dir DIR [--server URL] | local dns-config --dir DIR [--port 8053] | local simulate-nodes --kubeconfig F';

/** `staticsite local pki`: the control plane's PKI and an admin kubeconfig, for docker-compose. */
async function pkiCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { dir: { type: 'string' }, server: { type: 'string', default: 'https://127.0.0.1:6443' } },
    strict: true,
    allowPositionals: false,
  });
  if (!values.dir) throw new UsageError('--dir is required');
  io.stdout(`${await writeLocalPki(values.dir, values.server)}\n`);
  return 0;
}

/** `staticsite local dns-config`: BIND 9's configuration, zone and TSIG key, for docker-compose. */
async function dnsConfigCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { dir: { type: 'string' }, port: { type: 'string', default: '8053' } },
    strict: true,
    allowPositionals: false,
  });
  if (!values.dir) throw new UsageError('--dir is required');
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new UsageError(`--port must be a port (1-65535), got "${values.port}"`);
  }
  io.stdout(`${await writeLocalDnsConfig(values.dir, port)}\n`);
  return 0;
}

/** `staticsite local simulate-nodes`: what a kubelet would do, for a control plane without nodes. */
async function simulateNodesCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { kubeconfig: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  });
  if (!values.kubeconfig) throw new UsageError('--kubeconfig is required');
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
  const { values } = parseArgs({
    args,
    options: {
      'no-sample': { type: 'boolean', default: false },
      'exit-after-sample': { type: 'boolean', default: false },
      dns: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const say = (line: string) => io.stdout(`${line}\n`);
  const system = new LocalSystem({ log: say, dns: values.dns });
  await system.start();
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= system.stop();
    return stopping;
  };
  try {
    if (!values['no-sample']) await showSample(system, say);
    const cp = system.controlPlane;
    say(
      [
        '',
        'everything is running. Try:',
        `  export KUBECONFIG=${cp.kubeconfigPath} PATH=${cp.binDir}:$PATH`,
        '  kubectl get staticsites -A',
        ...(system.dns ? [`  dig @127.0.0.1 -p ${system.dns.port} hello.demo.${system.dns.zone}`] : []),
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
