import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';

// docs/architecture.md ("Small functions"): in every folder the package ships (tsconfig.build.json's "include",
// less its "exclude"), no function runs over 80 lines or takes more than 4 positional parameters (an options
// object does). The folders are read from tsconfig.build.json, so a new shipped folder is measured too.
const MAX_LINES = 80;
const MAX_PARAMETERS = 4;

const root = new URL('../../', import.meta.url).pathname;

/** tsconfig.build.json's "include" and "exclude": what `npm run build` compiles into dist/. */
function shipped(): { folders: string[]; excluded: string[] } {
  const path = join(root, 'tsconfig.build.json');
  const { config, error } = ts.readConfigFile(path, (file) => readFileSync(file, 'utf8'));
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const { include = [], exclude = [] } = config as { include?: string[]; exclude?: string[] };
  return { folders: include, excluded: exclude };
}

const { folders: FOLDERS, excluded: EXCLUDED } = shipped();

function sourcesIn(folder: string): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', `${folder}/*.ts`], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .filter((f) => !EXCLUDED.some((x) => f === x || f.startsWith(`${x}/`)));
}

interface FunctionSize {
  where: string;
  lines: number;
  parameters: number;
}

/** Every function with a body (declarations, methods, accessors, constructors, arrows, expressions). */
function functionsOf(file: string, text: string): FunctionSize[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: FunctionSize[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name ? node.name.getText(source) : '(anonymous)';
      found.push({
        where: `${file}:${first + 1} ${name}`,
        lines: last - first + 1,
        parameters: node.parameters.length,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('layout: small functions in every shipped folder', () => {
  const functions = FOLDERS.flatMap(sourcesIn).flatMap((f) => functionsOf(f, readFileSync(join(root, f), 'utf8')));

  it('measures the folders tsconfig.build.json ships (a list read wrong would measure nothing)', () => {
    expect(FOLDERS).to.include.members(['cli', 'controller', 'crd', 'kube', 'webhook', 'certs', 'devenv']);
  });

  it('finds the functions it measures (a walker that saw none would pass anything)', () => {
    expect(functions.length).to.be.above(500);
    const [probe] = functionsOf('probe.ts', 'class A { m(a: number, b = 2) {\n  return () => a + b;\n} }');
    expect(probe).to.deep.equal({ where: 'probe.ts:1 m', lines: 3, parameters: 2 });
  });

  it(`none is over ${MAX_LINES} lines`, () => {
    const long = functions.filter((f) => f.lines > MAX_LINES).map((f) => `${f.where}: ${f.lines} lines`);
    expect(long).to.deep.equal([]);
  });

  it(`none takes more than ${MAX_PARAMETERS} positional parameters`, () => {
    const wide = functions.filter((f) => f.parameters > MAX_PARAMETERS).map((f) => `${f.where}: ${f.parameters}`);
    expect(wide).to.deep.equal([]);
  });
});
