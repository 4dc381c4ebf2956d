import { buildCrd } from '../api/index.ts';
import { crdYaml } from './crd-yaml.ts';
import { CommandLine } from './flags.ts';
import type { CommandIO } from './usage.ts';

const CRD = new CommandLine('crd', {
  'schema-only': { type: 'boolean', default: false, help: 'v1 only, without the conversion webhook' },
  'without-cel': { type: 'boolean', default: false, help: 'without the CEL rules (the webhook enforces them)' },
});

export const usage = CRD.synopsis();
export const help = CRD.help();

/** `staticsite crd`: prints the StaticSite CRD as YAML. */
export async function crdCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = CRD.parse(args);
  io.stdout(crdYaml(buildCrd({ schemaOnly: values['schema-only'], withoutCelRules: values['without-cel'] })));
  return 0;
}

export { crdCommand as run };
