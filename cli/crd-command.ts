import { parseArgs } from 'node:util';
import { buildCrd } from '../api/index.ts';
import { crdYaml } from './crd-yaml.ts';
import type { CommandIO } from './usage.ts';

export const crdUsage = 'staticsite crd [--schema-only] [--without-cel]';

/** `staticsite crd`: prints the StaticSite CRD as YAML. */
export async function crdCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      'schema-only': { type: 'boolean', default: false },
      'without-cel': { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  io.stdout(crdYaml(buildCrd({ schemaOnly: values['schema-only'], withoutCelRules: values['without-cel'] })));
  return 0;
}
