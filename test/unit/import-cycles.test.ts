import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';

// No import cycle in the shipped tree: the files tsconfig.build.json compiles into dist/, read at test time so
// that a folder added to its "include" is checked too. A cycle makes what a module sees at load time depend on
// which file of the cycle was imported first (a class or constant read before its module ran).
//
// An edge is an import that stays in the JavaScript: `import ... from`, `export ... from`, `import '...'` and a
// dynamic `import('...')`. `import type` and `export type` are excluded: with verbatimModuleSyntax the compiler
// and Node's type stripping erase them, so they load nothing and cannot make a cycle at run time. An import whose
// names are all `type` (`import { type A } from`) is counted: verbatimModuleSyntax keeps it as `import {} from`,
// which loads the module. Only relative specifiers are followed (packages are not part of the tree); a shipped
// file's import of a file outside the shipped folders is followed too, since the build compiles it as well.

const root = new URL('../../', import.meta.url).pathname;

type Graph = ReadonlyMap<string, readonly string[]>;

/** The files tsconfig.build.json compiles by its own "include" and "exclude" (as tsc expands them). */
function shippedFiles(): string[] {
  const configFile = join(root, 'tsconfig.build.json');
  const { config } = ts.readConfigFile(configFile, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root, undefined, configFile);
  return parsed.fileNames.filter((f) => !f.endsWith('.d.ts')).map((f) => relative(root, f));
}

/** The relative specifiers of the imports of one file that load a module at run time (see above). */
function valueImports(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [specifier] = node.arguments;
      if (specifier && ts.isStringLiteralLike(specifier)) found.push(specifier.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.filter((s) => s.startsWith('./') || s.startsWith('../'));
}

/** The import graph of the shipped files and of every repository file they reach. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const pending = shippedFiles();
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (graph.has(file)) continue;
    const targets = valueImports(file, readFileSync(join(root, file), 'utf8'))
      .map((s) => normalize(join(dirname(file), s)))
      .filter((target) => target.endsWith('.ts') && existsSync(join(root, target)));
    graph.set(file, targets);
    pending.push(...targets.filter((target) => !graph.has(target)));
  }
  return graph;
}

/** The strongly connected components with a cycle (two or more nodes, or one that imports itself); Tarjan's. */
function cyclicComponents(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return found;
}

/** One cycle through a component, as a path that ends where it starts: `a -> b -> a`. */
function cyclePath(graph: Graph, component: readonly string[]): string {
  const members = new Set(component);
  const [start] = component as [string];
  const previous = new Map<string, string>();
  const queue = [start];
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    for (const next of graph.get(node) ?? []) {
      if (next === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== start && at !== undefined; at = previous.get(at)) {
          path.splice(1, 0, at);
        }
        return [...path, start].join(' -> ');
      }
      if (members.has(next) && !previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return component.join(', ');
}

/** The graph of folders: an edge A -> B when a file directly in A imports a file directly in B. */
function folderGraph(graph: Graph): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = dirname(file);
    const edges = folders.get(from) ?? new Set<string>();
    folders.set(from, edges);
    for (const target of targets) if (dirname(target) !== from) edges.add(dirname(target));
  }
  return new Map([...folders].map(([folder, edges]) => [folder, [...edges].sort()]));
}

function describeCycles(graph: Graph): string[] {
  return cyclicComponents(graph).map((component) => cyclePath(graph, component));
}

describe('layout: no import cycle in the shipped tree', () => {
  const graph = importGraph();

  it('reads the shipped tree (a walker that saw nothing would pass anything)', () => {
    expect(graph.size).to.be.above(200);
    expect([...graph.values()].flat().length).to.be.above(500);
    expect(graph.get('crd/cel/runtime-guards.ts')).to.include('crd/cel/common/null-values.ts');
  });

  it('finds a cycle in a small graph and prints its path; reads only the imports that load a module', () => {
    const synthetic = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'd.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    expect(describeCycles(synthetic)).to.deep.equal(['a.ts -> b.ts -> c.ts -> a.ts', 'e.ts -> e.ts']);
    expect(describeCycles(new Map([...synthetic].filter(([file]) => file !== 'c.ts' && file !== 'e.ts')))).to.be.empty;
    expect(folderGraph(new Map([['x/a.ts', ['y/b.ts', 'x/c.ts']]])).get('x')).to.deep.equal(['y']);
    const specifiers = valueImports(
      'probe.ts',
      [
        "import type { A } from './type-only.ts';",
        "import { type B } from './kept-empty.ts';",
        "export type { C } from './type-export.ts';",
        "export { D } from './re-export.ts';",
        "import { readFileSync } from 'node:fs';",
        "const e = await import('./dynamic.ts');",
      ].join('\n'),
    );
    expect(specifiers).to.deep.equal(['./kept-empty.ts', './re-export.ts', './dynamic.ts']);
  });

  it('has no cycle between files', () => {
    expect(describeCycles(graph)).to.deep.equal([]);
  });

  // The folder graph is held to no cycle only inside the CEL engine, whose crd/cel and crd/cel/library
  // imported each other: elsewhere a folder and a subfolder of it may still import each other without a cycle
  // between their files (controller and controller/reconcile, for one).
  it('has no cycle between the folders of the CEL engine (crd/cel and what it holds)', () => {
    const cel = new Map([...folderGraph(graph)].filter(([folder]) => folder.startsWith('crd/cel')));
    expect(describeCycles(cel)).to.deep.equal([]);
  });
});
