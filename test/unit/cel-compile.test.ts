/**
 * CRD-time checks of x-kubernetes-validations (compileRules): the API server's messages, as produced by
 * k8s.io/apiextensions-apiserver@v0.37.2/pkg/apis/apiextensions/validation/validation.go and
 * pkg/apiserver/schema/cel/compilation.go, and observed from kube-apiserver v1.37.2 by test/e2e/cel-parity.test.ts.
 */
import { expect } from 'chai';
import { staticSiteSchema } from '../../api/index.ts';
import type { JSONSchemaProps, ValidationRule } from '../../crd/apiextensions.ts';
import { aggregateMessage, compileRules } from '../../crd/cel/index.ts';

const BASE = 'spec.validation.openAPIV3Schema';
const RULE = `${BASE}.properties[spec].properties[x].x-kubernetes-validations[0]`;

function crdErrors(x: JSONSchemaProps, ...rules: ValidationRule[]): string {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: { spec: { type: 'object', properties: { x: { ...x, 'x-kubernetes-validations': rules } } } },
  };
  return aggregateMessage(compileRules(schema, { basePath: BASE }).errors);
}

const COST_HINT =
  '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';

describe('cel: compile-time checks when a CRD is written', () => {
  it("StaticSite's own rules compile in both versions", () => {
    expect(compileRules(staticSiteSchema('v1')).errors).to.deep.equal([]);
    expect(compileRules(staticSiteSchema('v1alpha1')).errors).to.deep.equal([]);
  });

  it("type errors: self.replicas == 'two'", () => {
    expect(
      crdErrors({ type: 'object', properties: { replicas: { type: 'integer' } } }, { rule: "self.replicas == 'two'" }),
    ).to.equal(
      `${RULE}.rule: Invalid value: {"Rule":"self.replicas == 'two'","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: ` +
        "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(int, string)'\n | self.replicas == 'two'\n | ..............^",
    );
  });

  it('unknown fields and non-bool rules', () => {
    expect(
      crdErrors({ type: 'object', properties: { name: { type: 'string' } } }, { rule: 'self.nope == 1' }),
    ).to.contain("compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^");
    expect(crdErrors({ type: 'string' }, { rule: "self + 'x'" })).to.match(/: cel expression must evaluate to a bool$/);
  });

  it('bad regex literals: invalid matches argument', () => {
    expect(crdErrors({ type: 'string' }, { rule: "self.matches('[')" })).to.contain(
      "compilation failed: ERROR: <input>:1:14: invalid matches argument\n | self.matches('[')\n | .............^",
    );
  });

  it("syntax errors in the parser's (ANTLR) wording", () => {
    expect(crdErrors({ type: 'string' }, { rule: "self.startsWith('a'" })).to.contain(
      "compilation failed: ERROR: <input>:1:20: Syntax error: missing ')' at '<EOF>'\n | self.startsWith('a'\n | ...................^",
    );
  });

  it('rules over the estimated cost budget, per rule and for the whole schema', () => {
    expect(
      crdErrors({ type: 'array', items: { type: 'integer' } }, { rule: 'self.map(p, p * 2).all(x, x < 1000)' }),
    ).to.equal(`${RULE}.rule: Forbidden: estimated rule cost exceeds budget by factor of 3.0x ${COST_HINT}`);
    const unbounded = crdErrors(
      { type: 'array', items: { type: 'string' } },
      { rule: 'self.all(x, self.all(y, x == y))' },
    );
    expect(unbounded).to.contain(
      `${RULE}.rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${COST_HINT}`,
    );
    expect(unbounded).to.contain(
      `${RULE}.rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
    );
    expect(unbounded).to.contain(
      `${BASE}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${COST_HINT}`,
    );
  });

  it("an element of the format library's messages is sized like self, as kube-apiserver v1.37.2 sizes it", () => {
    // Accepted by the server (test/e2e/cel-format-cost.test.ts): the element's path is `@items`, resolved from the root.
    expect(
      crdErrors(
        { type: 'string', maxLength: 63 },
        { rule: "format.dns1123Label().validate(self).value()[0] + 'x' == 'x'" },
      ),
    ).to.equal('');
    expect(
      crdErrors(
        { type: 'string', maxLength: 63 },
        { rule: "format.dns1123Label().validate(self).orValue(['ok'])[0].matches('^[a-z]+$')" },
      ),
    ).to.equal('');
  });

  it('messageExpression, fieldPath, optionalOldSelf and empty rules', () => {
    expect(crdErrors({ type: 'string' }, { rule: "self != ''", messageExpression: '1 + 1' })).to.match(
      /x-kubernetes-validations\[0\]\.messageExpression: Invalid value: \{.*"MessageExpression":"1 \+ 1".*\}: messageExpression must evaluate to a string$/,
    );
    expect(
      crdErrors(
        { type: 'object', properties: { name: { type: 'string' } } },
        { rule: "self.name != ''", fieldPath: '.nope' },
      ),
    ).to.equal(`${RULE}.fieldPath: Invalid value: ".nope": must be a valid path`);
    expect(crdErrors({ type: 'string' }, { rule: "self != ''", optionalOldSelf: true })).to.equal(
      `${RULE}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`,
    );
    expect(crdErrors({ type: 'string' }, { rule: '   ' })).to.equal(
      `${RULE}.rule: Required value: rule is not specified`,
    );
  });

  it('prints bad values as strconv.Quote does: a no-break space is escaped', () => {
    // strings.TrimSpace drops U+00A0; strconv.IsPrint says it is not printable, so %q writes \u00a0.
    expect(crdErrors({ type: 'string' }, { rule: "self == 'a'", message: '\u00a0' })).to.equal(
      `${RULE}.message: Invalid value: "\\u00a0": must be non-empty if specified`,
    );
  });

  it('oldSelf is rejected under list items that cannot be correlated (not a map-type list)', () => {
    const errors = crdErrors(
      { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10 } },
      { rule: 'true' },
    );
    expect(errors).to.equal('');
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            x: {
              type: 'array',
              maxItems: 10,
              items: { type: 'string', maxLength: 10, 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] },
            },
          },
        },
      },
    };
    expect(aggregateMessage(compileRules(schema, { basePath: BASE }).errors)).to.equal(
      `${BASE}.properties[spec].properties[x].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": ` +
        `oldSelf cannot be used on the uncorrelatable portion of the schema within ${BASE}.properties[spec].properties[x]`,
    );
  });
});
