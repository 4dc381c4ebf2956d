import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { loadAll } from 'js-yaml';
import { DEFAULT_NAMESPACE, EXCLUDED_NAMESPACES } from '../../api/index.ts';
import { namespaceList } from '../../cli/controller-command.ts';
import { run } from '../../cli/main.ts';

interface WebhookConfiguration {
  kind: string;
  webhooks: Array<{
    name: string;
    namespaceSelector?: { matchExpressions?: Array<{ key: string; operator: string; values: string[] }> };
  }>;
}

describe('controller: the same scope as the webhooks', () => {
  it('the webhook configurations skip exactly api/scope.ts EXCLUDED_NAMESPACES', async () => {
    const text = await readFile(
      new URL('../../manifests/webhook/webhook-configurations.yaml', import.meta.url),
      'utf8',
    );
    const configs = loadAll(text) as WebhookConfiguration[];
    const hooks = configs.flatMap((c) => c.webhooks);
    expect(hooks.map((h) => h.name)).to.deep.equal(['mutate.staticsite.dev', 'validate.staticsite.dev']);
    for (const hook of hooks) {
      expect(hook.namespaceSelector?.matchExpressions, hook.name).to.deep.equal([
        { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [...EXCLUDED_NAMESPACES] },
      ]);
    }
  });

  it('the list holds kube-system and the operator’s own namespace', () => {
    expect(EXCLUDED_NAMESPACES).to.deep.equal(['kube-system', DEFAULT_NAMESPACE]);
  });

  it('--exclude-namespaces defaults to that list; a value is a comma-separated list of namespace names', async () => {
    expect(namespaceList(EXCLUDED_NAMESPACES.join(','))).to.deep.equal([...EXCLUDED_NAMESPACES]);
    expect(namespaceList('a, b,,c')).to.deep.equal(['a', 'b', 'c']);
    expect(namespaceList('')).to.deep.equal([]);
    let stderr = '';
    const io = {
      stdout: () => {},
      stderr: (t: string) => {
        stderr += t;
      },
    };
    expect(await run(['controller', '--exclude-namespaces', 'kube-system,Bad_NS'], io)).to.equal(2);
    expect(stderr.split('\n')[0]).to.equal(
      'staticsite controller: --exclude-namespaces: "Bad_NS" is not a namespace name (a DNS-1123 label)',
    );
  });

  it('the CLI’s default is the constant itself, set nowhere else', async () => {
    const source = await readFile(new URL('../../cli/controller-command.ts', import.meta.url), 'utf8');
    expect(source).to.match(/'exclude-namespaces': \{\s+type: 'string',\s+default: EXCLUDED_NAMESPACES\.join\(','\),/);
    expect(source).not.to.include("'kube-system'");
  });
});
