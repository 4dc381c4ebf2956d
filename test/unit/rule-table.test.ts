import { expect } from 'chai';
import {
  buildCrd,
  type CustomResourceDefinition,
  composeHostname,
  defaultHostname,
  HOSTNAME_DEFAULT,
  type HostnameDefault,
  mutatingPolicy,
  policyObjects,
  policyValidation,
  type RuleTable,
  SITE_RULES,
  type SiteRule,
  staticSiteSchema,
  validatingPolicy,
  versionSchema,
} from '../../api/index.ts';
import { plainToCel } from '../../crd/cel/values.ts';
import { createCelEnvironment } from '../../crd/index.ts';
import type { AdmissionRequest } from '../../webhook/admission/review.ts';
import { SiteSchemas } from '../../webhook/admission/site-schemas.ts';
import { createSchemaValidator } from '../../webhook/admission/validate.ts';

// The rule table (api/rules.ts) and the hostname default (api/hostname.ts) are the only copies: every
// output is generated from them, so changing an entry changes the CRD, the webhook and the policies.

const schemaV1 = staticSiteSchema('v1', { withoutCelRules: true });

/** The table with the rule on `path` replaced. */
function replaced(path: string, change: Partial<SiteRule>): RuleTable {
  return SITE_RULES.map((rule) => (rule.path.join('.') === path ? { ...rule, ...change } : rule));
}

/** The x-kubernetes-validations of a version's node, by path. */
function crdRules(crd: CustomResourceDefinition, version: string, path: readonly string[]) {
  let node = versionSchema(crd, version);
  for (const field of path) node = node?.properties?.[field];
  return node?.['x-kubernetes-validations'] ?? [];
}

/** The validating webhook's verdict (the schema and CEL part) on creating `spec` with the rules of `crd`. */
function webhookCreate(crd: CustomResourceDefinition, spec: Record<string, unknown>) {
  const validate = createSchemaValidator({ schemas: new SiteSchemas(crd) });
  const request: AdmissionRequest = {
    uid: 'u1',
    kind: { group: 'staticsite.dev', version: 'v1', kind: 'StaticSite' },
    operation: 'CREATE',
    name: 'shop',
    namespace: 'web',
    object: { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name: 'shop', namespace: 'web' }, spec },
  };
  const { response } = validate(request);
  return { allowed: response.allowed, message: response.status?.message ?? '' };
}

/** Evaluates a policy's CEL as kube-apiserver binds it: object, oldObject, namespaceObject, params. */
function evaluatePolicyCel(expression: string, vars: Record<string, unknown>): unknown {
  const env = createCelEnvironment().env.clone();
  const names = ['object', 'oldObject', 'namespaceObject', 'params'];
  for (const name of names) env.registerVariable(name, 'dyn');
  return env.evaluate(expression, Object.fromEntries(names.map((n) => [n, plainToCel(vars[n] ?? null)])));
}

describe('api: one rule table for the CRD, the webhook and the admission policies', () => {
  const prod3: RuleTable = replaced('spec', {
    cel: ({ self }) => `${self}.tier != 'prod' || ${self}.replicas >= 3`,
    message: 'prod sites need at least 3 replicas',
  });
  const prod2 = { content: 'x', tier: 'prod', replicas: 2 };

  it('the real table gives the rules the CRD, the webhook and the policy have always had', () => {
    expect(crdRules(buildCrd(), 'v1', ['spec'])).to.deep.equal([
      { rule: "self.tier != 'prod' || self.replicas >= 2", message: 'prod sites need at least 2 replicas' },
    ]);
    expect(webhookCreate(buildCrd(), prod2).allowed).to.equal(true);
    expect(validatingPolicy().spec.validations.map((v) => v.expression)).to.deep.equal([
      "object.spec.tier != 'prod' || object.spec.replicas >= 2",
      'oldObject == null || !has(oldObject.spec.tier) || !has(object.spec.tier) || object.spec.tier == oldObject.spec.tier',
      String.raw`!has(object.spec.hostname) || object.spec.hostname.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,
    ]);
  });

  it('one changed rule changes the CRD on every version, the webhook and the validating policy', () => {
    const crd = buildCrd({ rules: prod3 });
    for (const version of ['v1alpha1', 'v1']) {
      expect(crdRules(crd, version, ['spec']), version).to.deep.equal([
        { rule: "self.tier != 'prod' || self.replicas >= 3", message: 'prod sites need at least 3 replicas' },
      ]);
      expect(crdRules(crd, version, ['spec', 'tier']), version).to.deep.equal(
        crdRules(buildCrd(), version, ['spec', 'tier']),
      );
    }

    const verdict = webhookCreate(crd, prod2);
    expect(verdict.allowed).to.equal(false);
    expect(verdict.message).to.include('prod sites need at least 3 replicas');

    const [validation] = validatingPolicy({ rules: prod3 }).spec.validations;
    expect(validation).to.deep.equal({
      expression: "object.spec.tier != 'prod' || object.spec.replicas >= 3",
      message: 'prod sites need at least 3 replicas',
      reason: 'Invalid',
    });
    expect(policyObjects({ rules: prod3 })[0]).to.deep.equal(validatingPolicy({ rules: prod3 }));
    expect(evaluatePolicyCel(validation?.expression ?? '', { object: { spec: prod2 } })).to.equal(false);
    expect(
      evaluatePolicyCel(validatingPolicy().spec.validations[0]?.expression ?? '', { object: { spec: prod2 } }),
    ).to.equal(true);
  });

  it('a new rule on another field lands on that field, guarded in the policy only where the field is optional', () => {
    const table: RuleTable = [
      ...SITE_RULES,
      {
        path: ['spec', 'content'],
        cel: ({ self }) => `size(${self}) <= 4`,
        message: 'short pages only',
        transition: false,
      },
      { path: ['spec', 'replicas'], cel: ({ self }) => `${self} % 2 == 1`, message: 'odd replicas', transition: false },
    ];
    const crd = buildCrd({ rules: table });
    expect(crdRules(crd, 'v1', ['spec', 'content'])).to.deep.equal([
      { rule: 'size(self) <= 4', message: 'short pages only' },
    ]);
    expect(webhookCreate(crd, { content: 'too long', replicas: 1 }).message).to.include('short pages only');
    expect(webhookCreate(crd, { content: 'ok', replicas: 3 }).allowed).to.equal(true);
    const validations = validatingPolicy({ rules: table }).spec.validations.map((v) => v.expression);
    // content is required (no guard), replicas is not.
    expect(validations.slice(3)).to.deep.equal([
      'size(object.spec.content) <= 4',
      '!has(object.spec.replicas) || object.spec.replicas % 2 == 1',
    ]);
  });

  it('a changed transition rule changes the CRD and the policy, whose guards follow the transition', () => {
    const table = replaced('spec.tier', { cel: ({ self, oldSelf }) => `${self} == ${oldSelf} || ${oldSelf} == 'dev'` });
    expect(crdRules(buildCrd({ rules: table }), 'v1', ['spec', 'tier'])).to.deep.equal([
      { rule: "self == oldSelf || oldSelf == 'dev'", message: 'tier is immutable' },
    ]);
    expect(validatingPolicy({ rules: table }).spec.validations[1]?.expression).to.equal(
      "oldObject == null || !has(oldObject.spec.tier) || !has(object.spec.tier) || object.spec.tier == oldObject.spec.tier || oldObject.spec.tier == 'dev'",
    );
  });

  it('parenthesizes a conditional behind the guards, not a ? in a string', () => {
    const rule: SiteRule = {
      path: ['spec', 'hostname'],
      cel: ({ self }) => `${self}.startsWith('?') ? false : size(${self}) > 3`,
      message: 'm',
      transition: false,
    };
    const { expression } = policyValidation(rule, schemaV1);
    expect(expression).to.equal(
      "!has(object.spec.hostname) || (object.spec.hostname.startsWith('?') ? false : size(object.spec.hostname) > 3)",
    );
    expect(evaluatePolicyCel(expression, { object: { spec: {} } })).to.equal(true);
    expect(evaluatePolicyCel(expression, { object: { spec: { hostname: 'ab' } } })).to.equal(false);
  });

  it('refuses a rule whose transition flag disagrees with its CEL, and a field CEL cannot select', () => {
    const wrong = replaced('spec.tier', { transition: false });
    expect(() => buildCrd({ rules: wrong })).to.throw(/reads oldSelf but says transition: false/);
    expect(() => validatingPolicy({ rules: wrong })).to.throw(/reads oldSelf/);
    const reserved: SiteRule = { path: ['spec', 'in'], cel: ({ self }) => self, message: 'm', transition: false };
    expect(() => policyValidation(reserved, schemaV1)).to.throw(/cannot be selected/);
    const lost: SiteRule = { path: ['spec', 'nothing'], cel: ({ self }) => self, message: 'm', transition: false };
    expect(() => buildCrd({ rules: [lost] })).to.throw(/no field spec.nothing/);
  });
});

describe('api: one hostname default for the webhook, the controller and the mutating policy', () => {
  const inputs = { name: 'shop', namespace: 'web', baseDomain: 'sites.example' };
  const policyVars = {
    object: { metadata: { name: 'shop' }, spec: {} },
    namespaceObject: { metadata: { name: 'web' } },
    params: { data: { baseDomain: 'sites.example' } },
  };
  const hostnameCel = (definition?: HostnameDefault) =>
    mutatingPolicy(definition && { hostnameDefault: definition }).spec.variables[0]?.expression ?? '';

  it('the real default: <name>.<namespace>.<base domain>, the same in TypeScript and in the policy', () => {
    expect(defaultHostname('shop', 'web', 'sites.example')).to.equal('shop.web.sites.example');
    expect(defaultHostname(undefined, 'web', 'sites.example')).to.equal(undefined);
    expect(defaultHostname('shop', '', 'sites.example')).to.equal(undefined);
    expect(hostnameCel()).to.equal(
      "object.metadata.name + '.' + namespaceObject.metadata.name + '.' + params.data.baseDomain",
    );
    expect(evaluatePolicyCel(hostnameCel(), policyVars)).to.equal(defaultHostname('shop', 'web', 'sites.example'));
  });

  it('a changed definition changes the TypeScript default and the policy CEL alike', () => {
    const changed: HostnameDefault = { parts: ['namespace', 'name', 'baseDomain'], separator: '-' };
    expect(composeHostname(changed, inputs)).to.equal('web-shop-sites.example');
    expect(composeHostname(HOSTNAME_DEFAULT, inputs)).to.equal('shop.web.sites.example');
    expect(hostnameCel(changed)).to.equal(
      "namespaceObject.metadata.name + '-' + object.metadata.name + '-' + params.data.baseDomain",
    );
    expect(evaluatePolicyCel(hostnameCel(changed), policyVars)).to.equal(composeHostname(changed, inputs));
    expect(policyObjects({ hostnameDefault: changed })[3]).to.deep.equal(mutatingPolicy({ hostnameDefault: changed }));
  });

  it('the policy defaults only when the parts it needs are known, as the TypeScript default', () => {
    const patch = (definition: HostnameDefault) =>
      mutatingPolicy({ hostnameDefault: definition }).spec.mutations[1]?.jsonPatch.expression ?? '';
    expect(patch(HOSTNAME_DEFAULT)).to.include("has(object.metadata.name) && object.metadata.name != ''");
    const withoutName: HostnameDefault = { parts: ['namespace', 'baseDomain'], separator: '.' };
    expect(patch(withoutName)).not.to.include('object.metadata.name');
    expect(composeHostname(withoutName, { ...inputs, name: undefined })).to.equal('web.sites.example');
    expect(evaluatePolicyCel(hostnameCel(withoutName), policyVars)).to.equal('web.sites.example');
  });
});
