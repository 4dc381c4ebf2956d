/**
 * The parity corpus: (rule, schema, object, old object) cases run through the real API server and through
 * webhook/cel. Each admission case becomes one property `spec.cN` of one CRD; compile cases are CRDs of their own.
 * Expected results are whatever the API server answers; the test asserts our engine answers the same.
 * Examples come from the Kubernetes CEL docs (https://kubernetes.io/docs/reference/using-api/cel/) and the
 * library sources in k8s.io/apiserver@v0.37.2/pkg/cel/library/*_test.go.
 */
import type { JSONSchemaProps, ValidationRule } from '../../crd/apiextensions.ts';

export interface AdmissionCase {
  group: string;
  schema: JSONSchemaProps;
  value: unknown;
  /** Present for UPDATE cases: the stored value. */
  old?: unknown;
  /** The stored value violates the rules (it was stored before they existed): tests ratcheting. */
  storedBeforeRules?: boolean;
}

export interface CompileCase {
  group: string;
  schema: JSONSchemaProps;
}

// Bounded like real CRDs should be, so that the estimated cost stays within the API server's budget.
const str: JSONSchemaProps = { type: 'string', maxLength: 128 };
const int: JSONSchemaProps = { type: 'integer' };
const num: JSONSchemaProps = { type: 'number' };
const strList: JSONSchemaProps = { type: 'array', maxItems: 16, items: str };
const intList: JSONSchemaProps = { type: 'array', maxItems: 16, items: int };
const strMap: JSONSchemaProps = { type: 'object', maxProperties: 16, additionalProperties: str };
const unboundedStr: JSONSchemaProps = { type: 'string' };
const unboundedStrList: JSONSchemaProps = { type: 'array', items: unboundedStr };

function withRules(schema: JSONSchemaProps, ...rules: Array<string | ValidationRule>): JSONSchemaProps {
  if (rules.length === 0) return schema;
  return { ...schema, 'x-kubernetes-validations': rules.map((r) => (typeof r === 'string' ? { rule: r } : r)) };
}

const cases: AdmissionCase[] = [];
const add = (
  group: string,
  schema: JSONSchemaProps,
  rule: string | ValidationRule | Array<string | ValidationRule>,
  value: unknown,
  old?: unknown,
) => {
  const rules = Array.isArray(rule) ? rule : [rule];
  cases.push({ group, schema: withRules(schema, ...rules), value, ...(old !== undefined && { old }) });
};

// ---- core semantics, typed values
const site: JSONSchemaProps = {
  type: 'object',
  properties: { tier: str, replicas: int, hostname: str, ratio: num, labels: strMap, ports: intList },
};
for (const [tier, replicas] of [
  ['prod', 1],
  ['prod', 2],
  ['dev', 1],
] as const) {
  add(
    'core',
    site,
    { rule: "self.tier != 'prod' || self.replicas >= 2", message: 'prod sites need at least 2 replicas' },
    { tier, replicas },
  );
}
add('core', site, 'self.replicas / 2 == 1', { replicas: 3 });
add('core', site, 'self.replicas % 2 == 1', { replicas: 3 });
add('core', site, 'type(self.replicas) == int', { replicas: 3 });
add('core', site, 'type(self.ratio) == double', { ratio: 3 });
add('core', site, "string(self.replicas) == '3'", { replicas: 3 });
add('core', site, 'self.ratio * 2.0 > 1.0', { ratio: 0.25 });
add('core', site, 'self.replicas < 3.5', { replicas: 3 });
add('core', site, 'has(self.hostname)', { tier: 'dev' });
add('core', site, "!has(self.hostname) || self.hostname.endsWith('.example.com')", { hostname: 'a.example.org' });
add('core', site, "'app' in self.labels", { labels: { team: 'x' } });
add('core', site, "self.labels.all(k, k.startsWith('app'))", { labels: { app: 'x', apps: 'y' } });
add('core', site, 'self.ports.exists_one(p, p == 443)', { ports: [80, 443, 443] });
add('core', site, 'self.ports.map(p, p * 2).all(x, x < 1000)', { ports: [80, 443] });
add('core', site, 'self.ports.filter(p, p > 100).size() == 1', { ports: [80, 443] });
add('core', site, 'size(self.ports) <= 2', { ports: [1, 2, 3] });
add('core', site, 'self.ports[3] == 1', { ports: [1] });
add('core', site, "self.labels['missing'] == 'x'", { labels: { a: 'b' } });
add('core', site, 'self.replicas / 0 == 1', { replicas: 1 });
add('core', site, 'self.replicas % 0 == 1', { replicas: 1 });
add('core', site, '9223372036854775807 + self.replicas > 0', { replicas: 1 });
add('core', site, "self.tier.matches('^(dev|prod)$')", { tier: 'qa' });
add('core', site, "(self.replicas > 1 ? 'multi' : 'single') == 'multi'", { replicas: 1 });
add('core', withRules(str), 'self.size() <= 5', 'abcdefg');
add('core', withRules(str), 'self == self.trim()', 'abc');
add('core', { type: 'integer' }, 'self >= 0', -1);
add('core', { type: 'integer' }, { rule: 'self >= 0', message: '  must be non-negative  ' }, -5);
add('core', { type: 'number' }, 'self < 1.5', 2.5);
add('core', { type: 'boolean' }, 'self', false);
add('core', strList, 'self.size() == 2', ['a', 'b', 'c']);
add('core', strMap, 'self.size() < 2', { a: 'x', b: 'y' });

// ---- time
const times: JSONSchemaProps = {
  type: 'object',
  properties: { at: { type: 'string', format: 'date-time' }, timeout: { type: 'string', format: 'duration' } },
};
add('time', times, "self.at < timestamp('2030-01-01T00:00:00Z')", { at: '2031-01-01T00:00:00Z' });
add('time', times, "self.at + duration('24h') > timestamp('2024-01-16T00:00:00Z')", { at: '2024-01-15T10:00:00Z' });
add('time', times, "self.timeout <= duration('1m')", { timeout: '90s' });
add('time', times, "self.timeout == duration('1h30m')", { timeout: '90m' });
add('time', times, 'self.at.getFullYear() == 2024', { at: '2024-03-01T00:00:00Z' });
add('time', times, 'self.timeout.getSeconds() == 90', { timeout: '1m30s' });

// ---- optional types
add('optional', site, "self.?hostname.orValue('none') == 'none'", { tier: 'dev' });
add('optional', site, "self.?hostname.orValue('none') == 'none'", { hostname: 'x' });
add('optional', site, "!self.labels[?'team'].hasValue()", { labels: { team: 'a' } });
add('optional', site, "self.?labels.team.orValue('') == 'a'", { labels: { team: 'a' } });
add('optional', site, 'optional.of(self.replicas).value() == 3', { replicas: 3 });
add('optional', site, 'optional.none().or(optional.of(1)).value() == 1', { replicas: 3 });

// ---- strings extension (cel-go ext/strings.go, version 2)
const strCases: Array<[string, string]> = [
  ["self.charAt(1) == 'b'", 'abc'],
  ["self.charAt(3) == ''", 'abc'],
  ['self.charAt(4) == ""', 'abc'],
  ["self.indexOf('c') == 2", 'abcabc'],
  ["self.indexOf('c', 3) == 5", 'abcabc'],
  ["self.indexOf('a', 10) == -1", 'abc'],
  ["self.lastIndexOf('b') == 4", 'abcabc'],
  ["self.lastIndexOf('b', 2) == 1", 'abcabc'],
  ["self.lowerAscii() == 'tacocat'", 'TacoCat'],
  ["self.lowerAscii() == 'àb'", 'ÀB'],
  ["self.upperAscii() == 'TACOCAT'", 'TacoCat'],
  ["self.replace('he', 'we') == 'wello wello'", 'hello hello'],
  ["self.replace('he', 'we', 1) == 'wello hello'", 'hello hello'],
  ["self.split(' ') == ['hello', 'hello', 'hello']", 'hello hello hello'],
  ["self.split(' ', 2) == ['hello', 'hello hello']", 'hello hello hello'],
  ["self.split('') == ['a', 'b']", 'ab'],
  ["self.substring(4) == 'cat'", 'tacocat'],
  ["self.substring(0, 4) == 'taco'", 'tacocat'],
  ["self.substring(5, 2) == 'x'", 'tacocat'],
  ["self.substring(-1) == 'x'", 'tacocat'],
  ["self.trim() == 'trim'", '  \ttrim\n  '],
  ["'%s is %s years'.format([self, '3']) == 'tom is 3 years'", 'tom'],
  ["'%.2f'.format([2.5]) == '2.50'", 'x'],
  ["'%x'.format([255]) == 'ff'", 'x'],
  ['strings.quote(self) == \'"a\\\\nb"\'', 'a\nb'],
  ['strings.quote(self) == \'"quoted"\'', 'x'],
  ['self.size() == 3', 'äöü'],
  ["self.indexOf('ü') == 2", 'äöü'],
];
for (const [rule, value] of strCases) add('strings', str, rule, value);
add('strings', strList, "self.join(',') == 'a,b'", ['a', 'b']);
add('strings', strList, "self.join() == 'ab'", ['a', 'b']);
add('strings', strList, "self.join('-') == 'a-b'", ['a', 'c']);

// ---- Kubernetes lists library (lists.go)
const listCases: Array<[string, JSONSchemaProps, unknown]> = [
  ['self.isSorted()', intList, [1, 2, 3]],
  ['self.isSorted()', intList, [3, 2, 1]],
  ['self.isSorted()', strList, ['a', 'b', 'b']],
  ['self.sum() == 6', intList, [1, 2, 3]],
  ['self.sum() == 0', intList, []],
  ['self.min() == 1', intList, [3, 1, 2]],
  ['self.max() == 3', intList, [3, 1, 2]],
  ['self.min() == 1', intList, []],
  ["self.max() == 'c'", strList, ['a', 'c', 'b']],
  ['self.indexOf(2) == 1', intList, [1, 2, 2]],
  ['self.lastIndexOf(2) == 2', intList, [1, 2, 2]],
  ["self.indexOf('z') == -1", strList, ['a']],
  ['[1.0, 2.5].sum() == 3.5', intList, []],
  ["[duration('1s'), duration('2s')].sum() == duration('3s')", intList, []],
];
for (const [rule, schema, value] of listCases) add('lists', schema, rule, value);

// ---- cel-go extended lists (ext/lists.go, version 3)
const intMatrix: JSONSchemaProps = { type: 'array', maxItems: 4, items: intList };
for (const [rule, value] of [
  ['self.slice(1, 3) == [2, 3]', [1, 2, 3, 4]],
  ['self.slice(self.size(), 1).size() == 0', [1, 2, 3]],
  ['self.slice(0, 10).size() > 0', [1, 2]],
  ['self.slice(-1, 1).size() > 0', [1, 2]],
  ['self.sort() == [1, 2, 3]', [3, 1, 2]],
  ['self.distinct() == self', [1, 2, 2]],
  ['self.reverse()[0] == 3', [1, 2, 3]],
  ['lists.range(3) == [0, 1, 2]', [7, 8, 9]],
  ['lists.range(-1).size() == 0', [1]],
  ['self.sort().reverse().distinct() == [3, 2, 1]', [1, 3, 2, 3]],
] as const) {
  add('extLists', intList, rule, value);
}
add('extLists', strList, "self.sort() == ['a', 'b', 'c']", ['c', 'a', 'b']);
add('extLists', strList, 'self.distinct().size() == self.size()', ['x', 'x']);
add('extLists', intMatrix, 'self.flatten() == [1, 2, 3]', [[1], [2, 3]]);
add('extLists', intMatrix, 'self.flatten(1).size() == 3', [[1], [2, 3]]);
add('extLists', intMatrix, 'self.flatten(-1).size() == 3', [[1]]);
// sortBy: keys from an expression; equal keys keep list order; dyn keys of two types, a failing key
for (const [rule, value] of [
  ['self.sortBy(x, -x) == [3, 2, 1]', [1, 3, 2]],
  ['self.sortBy(x, x % 2) == [2, 4, 1, 3]', [1, 2, 3, 4]],
  ['self.sortBy(x, x).sortBy(y, -y) == [2, 1]', [1, 2]],
  ['self.sortBy(x, x == 1 ? dyn(1) : dyn(1.0)).size() > 0', [1, 2]],
  ['self.sortBy(x, 10 / x).size() > 0', [1, 0]],
  ['self.sortBy(x, 10 / x).size() > 0 || true', [1, 0]],
] as const) {
  add('extLists', intList, rule, value);
}
add('extLists', strList, "self.sortBy(s, s.size()) == ['a', 'bb', 'ccc']", ['bb', 'ccc', 'a']);
// sort(), distinct() and sortBy of an error (an absent field): cel-go's cost tracker panics, which no `||` absorbs
const absentList: JSONSchemaProps = { type: 'object', properties: { l: intList, s: str } };
for (const rule of [
  'self.l.sort() == []',
  'self.l.distinct().size() == 0 || true',
  '[1, 2].all(x, x == 1 || self.l.sort() == [])',
  'self.l.sortBy(x, x).size() == 0',
  'self.l.reverse().size() == 0',
  "true || self.l.sort() == [] && self.s == ''",
]) {
  add('extLists', absentList, rule, { s: 'x' });
}

// ---- cel-go optional library at its latest version: first, last, unwrap, unwrapOpt, optMap, optFlatMap, ==
for (const [rule, value] of [
  ['self.first() == optional.of(1)', [1, 2]],
  ['self.last().orValue(0) == 3', [1, 2, 3]],
  ['self.first() == optional.none()', []],
  ['self.first() != optional.none()', [1]],
  ['[self.first(), self.last()].unwrapOpt() == [1, 3]', [1, 2, 3]],
  ['optional.unwrap([self.first(), optional.none()]) == [1]', [1]],
  ['self.first().optMap(x, x * 2).orValue(0) == 2', [1]],
  ['self.last().optFlatMap(x, x > 1 ? optional.of(x) : optional.none()) == optional.of(3)', [1, 3]],
  ['self.last().optFlatMap(x, x > 1 ? optional.of(x) : optional.none()).hasValue()', [1]],
  ['[[], [1]].size() == 2 && [optional.none(), self.first()].size() == 2', [1]],
] as const) {
  add('optionals', intList, rule, value);
}

// ---- regex library (regex.go)
const regexCases: Array<[string, string]> = [
  ["self.find('[0-9]+') == '123'", 'abc 123'],
  ["self.find('xyz') == ''", 'abc'],
  ["self.findAll('[0-9]+') == ['1', '2', '3']", '1 2 3'],
  ["self.findAll('[0-9]+', 2) == ['1', '2']", '1 2 3'],
  ["self.findAll('[0-9]+', 0) == []", '1 2 3'],
  ["self.matches('^[a-z]+$')", 'ABC'],
  ["self.matches('(?i)^[a-z]+$')", 'ABC'],
  ["self.find('b+') == 'bbb'", 'abbbc'],
];
for (const [rule, value] of regexCases) add('regex', str, rule, value);

// ---- URL library (urls.go)
const urlCases: Array<[string, string]> = [
  ['isURL(self)', 'https://example.com:80/'],
  ['isURL(self)', '../relative-path'],
  ['isURL(self)', '/absolute-path'],
  ["url(self).getScheme() == 'https'", 'https://example.com:80/'],
  ["url(self).getHost() == 'example.com:80'", 'https://example.com:80/'],
  ["url(self).getHostname() == 'example.com'", 'https://example.com:80/'],
  ["url(self).getPort() == '80'", 'https://example.com:80/'],
  ["url(self).getPort() == ''", 'https://example.com/'],
  ["url(self).getHostname() == '::1'", 'https://[::1]:80/'],
  ["url(self).getHost() == '[::1]:80'", 'https://[::1]:80/'],
  ["url(self).getEscapedPath() == '/path%20with%20spaces/'", 'https://example.com/path with spaces/'],
  ["url(self).getEscapedPath() == '/path'", 'https://example.com/path?k=v'],
  ["url(self).getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}", 'https://example.com/path?k1=a&k2=b&k2=c'],
  ['url(self).getQuery().size() == 0', 'https://example.com/'],
  ["url(self).getScheme() == ''", '/absolute-path'],
  ["url(self).getHost() == ''", '../relative-path'],
];
for (const [rule, value] of urlCases) add('urls', str, rule, value);

// ---- quantity library (quantity.go)
const quantityCases: Array<[string, string]> = [
  ['isQuantity(self)', '20M'],
  ['isQuantity(self)', '20Mi'],
  ['isQuantity(self)', '1.5Gi'],
  ['isQuantity(self)', '20mb'],
  ['isQuantity(self)', ''],
  ["quantity(self).isGreaterThan(quantity('1G'))", '1Gi'],
  ["quantity(self).isLessThan(quantity('100Mi'))", '50M'],
  ["quantity(self).compareTo(quantity('200M')) == 0", '0.2G'],
  ["quantity(self).compareTo(quantity('1')) == -1", '500m'],
  ['quantity(self).asInteger() == 1024', '1Ki'],
  ['quantity(self).asInteger() == 1', '1500m'],
  ['quantity(self).isInteger()', '1500m'],
  ['quantity(self).asApproximateFloat() == 1.5', '1500m'],
  ["quantity(self).add(quantity('50k')).isGreaterThan(quantity('100k'))", '60k'],
  ["quantity(self).add(3) == quantity('5')", '2'],
  ["sign(quantity(self).sub(quantity('1'))) == -1", '500m'],
  ["quantity(self).sub(1).isLessThan(quantity('0'))", '500m'],
  ["quantity(self) == quantity('1000m')", '1'],
  ['quantity(self).asInteger() > 0', 'abc'],
  ['sign(quantity(self)) == 1', '5'],
];
for (const [rule, value] of quantityCases) add('quantity', str, rule, value);

// ---- IP and CIDR libraries (ip.go, cidr.go)
const ipCases: Array<[string, string]> = [
  ['isIP(self)', '192.168.0.1'],
  ['isIP(self)', '192.168.0.1.0'],
  ['isIP(self)', '2001:db8::68'],
  ['isIP(self)', '127.0.0.01'],
  ['isIP(self)', 'fe80::1%eth0'],
  ['isIP(self)', '::ffff:192.168.0.1'],
  ['ip(self).family() == 4', '192.168.0.1'],
  ['ip(self).family() == 6', '2001:db8::68'],
  ['ip.isCanonical(self)', '2001:db8::68'],
  ['ip.isCanonical(self)', '2001:DB8::68'],
  ['ip.isCanonical(self)', '2001:db8:0:0:0:0:0:68'],
  ['ip(self).isUnspecified()', '0.0.0.0'],
  ['ip(self).isLoopback()', '127.0.0.1'],
  ['ip(self).isLoopback()', '::1'],
  ['ip(self).isLinkLocalMulticast()', '224.0.0.1'],
  ['ip(self).isLinkLocalUnicast()', 'fe80::1'],
  ['ip(self).isGlobalUnicast()', '192.168.0.1'],
  ['ip(self).isGlobalUnicast()', '255.255.255.255'],
  ["string(ip(self)) == '2001:db8::68'", '2001:DB8:0:0:0::68'],
  ["ip(self) == ip('10.0.0.1')", '10.0.0.1'],
  ['isCIDR(self)', '192.168.0.0/24'],
  ['isCIDR(self)', '192.168.0.0'],
  ['isCIDR(self)', '192.168.0.0/33'],
  ["cidr(self).containsIP(ip('192.168.0.1'))", '192.168.0.0/24'],
  ["cidr(self).containsIP('192.168.1.1')", '192.168.0.0/24'],
  ["cidr(self).containsCIDR(cidr('192.168.0.0/25'))", '192.168.0.0/24'],
  ["cidr(self).containsCIDR('192.168.0.0/23')", '192.168.0.0/24'],
  ['cidr(self).prefixLength() == 24', '192.168.0.0/24'],
  ["cidr(self).ip() == ip('192.168.0.1')", '192.168.0.1/24'],
  ["string(cidr(self).masked()) == '192.168.0.0/24'", '192.168.0.1/24'],
  ['cidr(self).ip().family() == 6', '2001:db8::/32'],
  ["string(cidr(self)) == '2001:db8::/32'", '2001:DB8::/32'],
];
for (const [rule, value] of ipCases) add('ip-cidr', str, rule, value);

// ---- format library (format.go)
const formatCases: Array<[string, string]> = [
  ['!format.dns1123Label().validate(self).hasValue()', 'my-name'],
  ['!format.dns1123Label().validate(self).hasValue()', 'My_Name'],
  ['!format.dns1123Label().validate(self).hasValue()', 'a.b'],
  ['!format.dns1123Subdomain().validate(self).hasValue()', 'example.com'],
  ['!format.dns1123Subdomain().validate(self).hasValue()', '-example.com'],
  ['!format.dns1035Label().validate(self).hasValue()', '1abc'],
  ['!format.qualifiedName().validate(self).hasValue()', 'example.com/MyName'],
  ['!format.labelValue().validate(self).hasValue()', 'my_value'],
  ['!format.uri().validate(self).hasValue()', 'https://example.com'],
  ['!format.uuid().validate(self).hasValue()', '123e4567-e89b-12d3-a456-426614174000'],
  ['!format.byte().validate(self).hasValue()', 'aGVsbG8='],
  ['!format.date().validate(self).hasValue()', '2024-02-30'],
  ['format.named(self).hasValue()', 'dns1123Label'],
  ['format.named(self).hasValue()', 'nope'],
  ["format.named('dns1123Label').value().validate(self).hasValue()", 'UPPER'],
  ['format.dns1123Label().validate(self).value().size() == 1', 'UPPER'],
];
for (const [rule, value] of formatCases) add('format', str, rule, value);
add(
  'format',
  str,
  { rule: '!format.dns1123Subdomain().validate(self).hasValue()', messageExpression: "'not a DNS subdomain: ' + self" },
  'Not_A_Host',
);

// ---- semver library (semverlib.go)
const semverCases: Array<[string, string]> = [
  ['isSemver(self)', '1.0.0'],
  ['isSemver(self)', 'v1.0.0'],
  ['isSemver(self, true)', 'v1.0'],
  ['isSemver(self)', '1.0.0-alpha.1+build.5'],
  ["semver(self).isLessThan(semver('1.10.0'))", '1.2.3'],
  ["semver(self).isGreaterThan(semver('1.0.0-rc.1'))", '1.0.0'],
  ["semver(self).compareTo(semver('1.0.0-alpha.beta')) == -1", '1.0.0-alpha.1'],
  ['semver(self).major() == 1 && semver(self).minor() == 2 && semver(self).patch() == 3', '1.2.3'],
  ["semver(self, true) == semver('1.2.0')", 'v01.02'],
  ['semver(self).major() == 1', 'not-a-version'],
];
for (const [rule, value] of semverCases) add('semver', str, rule, value);

// ---- sets extension
const setCases: Array<[string, unknown]> = [
  ["sets.contains(self, ['a'])", ['a', 'b']],
  ["sets.contains(self, ['c'])", ['a', 'b']],
  ['sets.contains(self, [])', ['a']],
  ["sets.equivalent(self, ['b', 'a', 'a'])", ['a', 'b']],
  ["sets.equivalent(self, ['a', 'c'])", ['a', 'b']],
  ["sets.intersects(self, ['b', 'z'])", ['a', 'b']],
  ["sets.intersects(self, ['z'])", ['a', 'b']],
];
for (const [rule, value] of setCases) add('sets', strList, rule, value);

// ---- two-variable comprehensions (cel-go ext/comprehensions.go)
const twoVar: Array<[string, JSONSchemaProps, unknown]> = [
  ['self.all(i, v, v > i)', intList, [1, 2, 3]],
  ['self.all(i, v, v > i)', intList, [0, 2]],
  ["self.exists(k, v, k == 'a' && v == 'x')", strMap, { a: 'x' }],
  ["self.existsOne(i, v, v == 'b')", strList, ['a', 'b', 'b']],
  ['self.transformList(i, v, v * i) == [0, 2, 6]', intList, [1, 2, 3]],
  ['self.transformList(i, v, i > 0, v) == [2, 3]', intList, [1, 2, 3]],
  ["self.transformMap(k, v, v + '!') == {'a': 'x!'}", strMap, { a: 'x' }],
  ["self.transformMapEntry(k, v, {v: k}) == {'x': 'a'}", strMap, { a: 'x' }],
  ['self.all(k, v, k.size() == v.size())', strMap, { ab: 'xy', c: 'zz' }],
];
for (const [rule, schema, value] of twoVar) add('two-var', schema, rule, value);

// ---- message, messageExpression, reason, fieldPath
const replicaSpec: JSONSchemaProps = { type: 'object', properties: { replicas: int, name: str, labels: strMap } };
add(
  'message',
  { type: 'object', properties: { replicas: int, name: str } },
  { rule: 'self.replicas < 5', messageExpression: "'replicas of ' + self.name + ' are too many'" },
  { replicas: 7, name: 'web' },
);
add(
  'message',
  { type: 'object', properties: { replicas: int, name: str } },
  { rule: 'self.replicas < 5', messageExpression: "'%d replicas are too many'.format([self.replicas])" },
  { replicas: 7, name: 'web' },
);
add(
  'message',
  replicaSpec,
  { rule: 'self.replicas < 5', message: 'static', messageExpression: "'  padded  '" },
  { replicas: 7 },
);
add(
  'message',
  replicaSpec,
  { rule: 'self.replicas < 5', message: 'fallback used', messageExpression: "''" },
  { replicas: 7 },
);
add(
  'message',
  replicaSpec,
  { rule: 'self.replicas < 5', message: 'fallback on newline', messageExpression: "'a\\nb'" },
  { replicas: 7 },
);
add(
  'message',
  replicaSpec,
  { rule: 'self.replicas < 5', message: 'fallback on error', messageExpression: "self.name + '!'" },
  { replicas: 7 },
);
add('message', replicaSpec, { rule: 'self.replicas < 5', messageExpression: 'self.name' }, { replicas: 7, name: 'n' });
add(
  'message',
  replicaSpec,
  { rule: 'self.replicas < 5', message: 'too long', messageExpression: "'%s'.format([strings.quote(self.name)])" },
  { replicas: 7, name: 'q' },
);
add(
  'message',
  replicaSpec,
  { rule: 'self.replicas < 5', reason: 'FieldValueForbidden', message: 'forbidden here' },
  { replicas: 7 },
);
add(
  'message',
  replicaSpec,
  { rule: 'self.replicas < 5', reason: 'FieldValueRequired', message: 'required here' },
  { replicas: 7 },
);
add(
  'message',
  replicaSpec,
  { rule: 'self.replicas < 5', reason: 'FieldValueDuplicate', message: 'dup' },
  { replicas: 7 },
);
add(
  'message',
  replicaSpec,
  { rule: 'self.replicas < 5', reason: 'FieldValueInvalid', message: 'invalid' },
  { replicas: 7 },
);
add(
  'message',
  replicaSpec,
  { rule: 'self.replicas < 5', fieldPath: '.replicas', message: 'at replicas' },
  { replicas: 7 },
);
add(
  'message',
  replicaSpec,
  { rule: "self.name != 'x'", fieldPath: '.name', reason: 'FieldValueForbidden', message: 'name x' },
  { name: 'x' },
);
add(
  'message',
  replicaSpec,
  { rule: "!('a' in self.labels)", fieldPath: ".labels['a']", message: 'label a' },
  { labels: { a: 'b' } },
);
add(
  'message',
  replicaSpec,
  { rule: "!('a.b' in self.labels)", fieldPath: ".labels['a.b']", message: 'dotted' },
  { labels: { 'a.b': 'c' } },
);
add('message', replicaSpec, ['self.replicas < 5', "self.name == 'ok'"], { replicas: 7, name: 'bad' });
add('message', { type: 'string' }, { rule: "self == 'ok'", reason: 'FieldValueDuplicate' }, 'dup-value');
add(
  'message',
  { type: 'integer' },
  { rule: 'self < 10', messageExpression: "'value %d is too big'.format([self])" },
  12,
);

// ---- transition rules, optionalOldSelf, ratcheting
add('transition', str, { rule: 'self == oldSelf', message: 'immutable' }, 'b', 'a');
add('transition', str, { rule: 'self == oldSelf', message: 'immutable' }, 'a', 'a');
add('transition', str, { rule: 'self == oldSelf', message: 'immutable' }, 'a');
add('transition', int, 'self >= oldSelf', 1, 2);
add('transition', int, 'self >= oldSelf', 3, 2);
add(
  'transition',
  str,
  { rule: '!oldSelf.hasValue() || self == oldSelf.value()', optionalOldSelf: true, message: 'set once' },
  'x',
);
add(
  'transition',
  str,
  { rule: "oldSelf.hasValue() || self == 'first'", optionalOldSelf: true, message: 'must start first' },
  'second',
);
add(
  'transition',
  str,
  { rule: "oldSelf.orValue('') != 'locked' || self == 'locked'", optionalOldSelf: true, message: 'locked' },
  'open',
  'locked',
);
// A messageExpression of an optionalOldSelf rule is evaluated with the plain activation: oldSelf is
// the old value itself on update, and absent on create.
const optionalWithMessage = (messageExpression: string, message?: string): ValidationRule => ({
  rule: '!oldSelf.hasValue() || self == oldSelf.value()',
  optionalOldSelf: true,
  messageExpression,
  ...(message !== undefined && { message }),
});
add('optionalMessage', str, optionalWithMessage("oldSelf.hasValue() ? 'had a value' : 'had none'"), 'b', 'a');
add('optionalMessage', str, optionalWithMessage("oldSelf.hasValue() ? 'was set' : 'new'", 'set once'), 'b', 'a');
add('optionalMessage', str, optionalWithMessage("'now ' + self"), 'b', 'a');
add(
  'optionalMessage',
  str,
  {
    rule: "oldSelf.hasValue() || self == 'first'",
    optionalOldSelf: true,
    messageExpression: "oldSelf.hasValue() ? 'had one' : 'none before'",
  },
  'second',
);
add(
  'optionalMessage',
  str,
  { rule: "oldSelf.hasValue() || self == 'first'", optionalOldSelf: true, messageExpression: "'got ' + self" },
  'second',
);
add(
  'transition',
  replicaSpec,
  { rule: 'self.replicas >= oldSelf.replicas', message: 'no scale down' },
  { replicas: 1 },
  { replicas: 3 },
);
const ratchet = (
  schema: JSONSchemaProps,
  rule: string | ValidationRule | Array<string | ValidationRule>,
  value: unknown,
  old: unknown,
) => {
  add('ratcheting', schema, rule, value, old);
  (cases[cases.length - 1] as AdmissionCase).storedBeforeRules = true;
};
ratchet(
  replicaSpec,
  { rule: 'self.replicas < 5', message: 'ratchet me' },
  { replicas: 7, name: 'b' },
  { replicas: 7, name: 'a' },
);
ratchet(replicaSpec, { rule: 'self.replicas < 5', message: 'changed, no ratchet' }, { replicas: 8 }, { replicas: 7 });
ratchet(
  { type: 'object', properties: { a: withRules(str, { rule: "self.startsWith('x')", message: 'prefix' }), b: str } },
  [],
  { a: 'bad', b: 'new' },
  { a: 'bad', b: 'old' },
);
// two ratcheted rules failing with the same message: the server's recorder keeps one warning
ratchet(
  {
    type: 'object',
    properties: {
      a: withRules(
        str,
        { rule: "self.startsWith('x')", message: 'prefix' },
        { rule: "self.endsWith('x')", message: 'prefix' },
      ),
      b: str,
    },
  },
  [],
  { a: 'bad', b: 'new' },
  { a: 'bad', b: 'old' },
);
ratchet(
  { type: 'object', properties: { a: withRules(str, { rule: "self.startsWith('x')", message: 'prefix' }), b: str } },
  [],
  { a: 'worse', b: 'old' },
  { a: 'bad', b: 'old' },
);
ratchet(
  { type: 'object', properties: { a: str } },
  { rule: "self.a.startsWith('x')", message: 'whole object' },
  { a: 'bad' },
  { a: 'bad' },
);
ratchet(
  {
    type: 'array',
    maxItems: 16,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['name'],
    items: withRules(
      { type: 'object', required: ['name'], properties: { name: str, v: int } },
      { rule: 'self.v < 10', message: 'v below 10' },
    ),
  },
  [],
  [
    { name: 'a', v: 20 },
    { name: 'b', v: 1 },
  ],
  [{ name: 'a', v: 20 }],
);
ratchet(
  {
    type: 'array',
    maxItems: 16,
    items: withRules(
      { type: 'object', properties: { name: str, v: int } },
      { rule: 'self.v < 10', message: 'atomic list item' },
    ),
  },
  [],
  [
    { name: 'a', v: 20 },
    { name: 'b', v: 1 },
  ],
  [{ name: 'a', v: 20 }],
);
ratchet(strMap, { rule: "!('bad' in self)", message: 'no bad key' }, { bad: 'x', other: 'y' }, { bad: 'x' });
ratchet(str, { rule: 'self == oldSelf', message: 'transition rules never ratchet' }, 'b', 'b');
add(
  'transition',
  {
    type: 'array',
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['name'],
    items: withRules(
      { type: 'object', required: ['name'], properties: { name: str, v: int } },
      { rule: 'self.v >= oldSelf.v', message: 'v only grows' },
    ),
  },
  [],
  [{ name: 'a', v: 1 }],
  [{ name: 'a', v: 2 }],
);
add(
  'transition',
  strMap,
  { rule: 'self.size() >= oldSelf.size()', message: 'no removal' },
  { a: 'x' },
  { a: 'x', b: 'y' },
);
add(
  'transition',
  {
    type: 'object',
    maxProperties: 16,
    additionalProperties: withRules(str, { rule: 'self == oldSelf', message: 'value immutable' }),
  },
  [],
  { a: 'y' },
  { a: 'x' },
);

// ---- nested nodes and nulls
add(
  'nested',
  { type: 'object', properties: { inner: withRules({ type: 'object', properties: { x: int } }, 'self.x > 0') } },
  [],
  { inner: { x: 0 } },
);
add('nested', { type: 'array', items: withRules(str, "self != 'bad'") }, [], ['ok', 'bad', 'bad']);
add('nested', { type: 'object', additionalProperties: withRules(int, 'self > 0') }, [], { a: 1, b: -1 });
add(
  'nested',
  {
    type: 'array',
    items: withRules(
      { type: 'object', properties: { port: int } },
      { rule: 'self.port < 65536', message: 'port range' },
    ),
  },
  [],
  [{ port: 80 }, { port: 70000 }],
);
add(
  'nested',
  { type: 'object', properties: { opt: withRules({ type: 'string', nullable: true }, "self == 'x'") } },
  [],
  { opt: null },
);
add(
  'nested',
  { type: 'object', properties: { 'my-field': str, namespace: str } },
  "self.my__dash__field == 'a' && self.__namespace__ == 'b'",
  { 'my-field': 'a', namespace: 'c' },
);
add('nested', { type: 'object', properties: { 'a.b': str, x__y: str } }, 'self.a__dot__b == self.x__underscores__y', {
  'a.b': 'p',
  x__y: 'q',
});
add('nested', { 'x-kubernetes-int-or-string': true }, "type(self) == string ? self.endsWith('%') : self > 0", '50');
add('nested', { 'x-kubernetes-int-or-string': true }, "type(self) == string ? self.endsWith('%') : self > 0", 0);
add('nested', { 'x-kubernetes-int-or-string': true }, 'self > 0', 'abc');
add('nested', { type: 'string', format: 'byte' }, "self == b'hello'", 'aGVsbG8=');
add('nested', { type: 'string', format: 'byte' }, 'size(self) == 3', 'aGVsbG8=');
add(
  'nested',
  {
    type: 'object',
    'x-kubernetes-embedded-resource': true,
    'x-kubernetes-preserve-unknown-fields': true,
    properties: { apiVersion: str, kind: str, metadata: { type: 'object' } },
  },
  "self.kind == 'ConfigMap' && self.metadata.name.startsWith('cm-')",
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other' } },
);

// ---- has() on any operand: a select after an index or a call (Gateway API's HTTPRoute writes
// has(self.matches[0].path))
const matches: JSONSchemaProps = {
  type: 'object',
  properties: {
    matches: {
      type: 'array',
      maxItems: 8,
      items: { type: 'object', properties: { path: { type: 'object', properties: { value: str } }, method: str } },
    },
    byName: { type: 'object', maxProperties: 8, additionalProperties: { type: 'object', properties: { port: int } } },
  },
};
const firstPath =
  "self.matches.size() == 0 || !has(self.matches[0].path) || self.matches[0].path.value.startsWith('/')";
add('presence', matches, firstPath, { matches: [{ path: { value: '/a' } }] });
add('presence', matches, firstPath, { matches: [{ path: { value: 'a' } }] });
add('presence', matches, firstPath, { matches: [{ method: 'GET' }] });
add('presence', matches, firstPath, { matches: [] });
add('presence', matches, 'has(self.matches[1].path)', { matches: [{ method: 'GET' }] });
add('presence', matches, 'has(self.matches[0].path.value)', { matches: [{ path: {} }] });
add('presence', matches, 'has(self.matches[0].path.value)', { matches: [{ method: 'GET' }] });
add('presence', matches, "has(self.byName['a'].port)", { byName: { a: { port: 1 } } });
add('presence', matches, "has(self.byName['a'].port)", { byName: { b: { port: 1 } } });
add('presence', matches, 'self.matches.all(m, !has(m.path) || has(self.matches[0].path))', {
  matches: [{ method: 'GET' }, { path: { value: '/' } }],
});

// ---- null beside an optional, an object, a duration, a timestamp or a library type: cel-go's
// checker accepts the comparison (Gateway API's experimental XBackend writes
// format.dns1123Label().validate(self) == null); none of them equals null
add('null', str, 'format.dns1123Label().validate(self) == null', 'abc');
add('null', str, 'size(self) == 0 || format.dns1123Label().validate(self) != null', 'Not_A_Label');
add('null', str, 'optional.of(self) != null && null != optional.none()', 'x');
add(
  'null',
  { type: 'object', properties: { inner: { type: 'object', properties: { x: int } } } },
  'self.inner != null',
  {
    inner: { x: 1 },
  },
);
add(
  'null',
  { type: 'object', properties: { d: { type: 'string', format: 'duration', maxLength: 32 } } },
  'self.d != null',
  {
    d: '1s',
  },
);
add(
  'null',
  { type: 'object', properties: { t: { type: 'string', format: 'date-time', maxLength: 64 } } },
  'self.t == null',
  {
    t: '2026-12-03T00:00:00Z',
  },
);
add('null', str, 'quantity(self) != null && ip("10.0.0.1") != null', '1Gi');

// ---- runtime cost limits
const bigList: JSONSchemaProps = { type: 'array', maxItems: 1000, items: { type: 'integer' } };
add(
  'cost',
  bigList,
  'self.all(x, self.all(y, x >= 0 && y >= 0))',
  Array.from({ length: 1000 }, (_, i) => i),
);
add(
  'cost',
  bigList,
  'self.all(x, self.all(y, x >= 0 && y >= 0))',
  Array.from({ length: 50 }, (_, i) => i),
);
add(
  'cost',
  { type: 'array', maxItems: 700, items: { type: 'string', maxLength: 10 } },
  "self.all(x, self.exists(y, x + y == 'zz'))",
  Array.from({ length: 700 }, (_, i) => `s${i}`),
);

// per-object budget (RuntimeCELCostBudget): 30 passing rules of ~0.6M each exhaust 10M
add(
  'cost',
  { type: 'array', maxItems: 300, items: int },
  Array.from({ length: 30 }, () => 'self.all(x, self.all(y, x + y >= 0))'),
  Array.from({ length: 300 }, (_, i) => i),
);
add(
  'cost',
  { type: 'array', maxItems: 300, items: int },
  Array.from({ length: 30 }, () => 'self.all(x, self.all(y, x + y >= 0))'),
  Array.from({ length: 20 }, (_, i) => i),
);

// ---- runtime errors
add('runtime-error', intList, 'self[5] == 1', [1, 2]);
add('runtime-error', intList, 'self[-1] == 1', [1, 2]);
add('runtime-error', replicaSpec, 'self.name.size() > 0', { replicas: 1 });
add('runtime-error', str, 'int(self) > 0', 'abc');
add('runtime-error', str, "duration(self) > duration('1s')", 'abc');
add('runtime-error', str, "timestamp(self) > timestamp('2020-01-01T00:00:00Z')", 'not-a-time');
add('runtime-error', str, "url(self).getHost() == ''", 'https://exa mple.com/');
add('runtime-error', str, 'cidr(self).prefixLength() == 1', '1.2.3.4');
add('runtime-error', str, 'ip(self).family() == 4', '1.2.3');
add('runtime-error', intList, 'self.max() > 0', []);
add('runtime-error', str, "self.charAt(10) == 'a'", 'abc');
add('runtime-error', str, "self.substring(2, 1) == 'a'", 'abc');
add('runtime-error', { type: 'integer' }, 'self * 9223372036854775807 > 0', 2);
add(
  'message',
  str,
  { rule: "self == 'ok'", message: 'fallback on long message', messageExpression: `'${'x'.repeat(5200)}'` },
  'bad',
);
add('message', str, { rule: "self == 'ok'", message: 'fallback on blank message', messageExpression: "'   '" }, 'bad');
add('message', str, { rule: "self == 'ok'", messageExpression: `'${'y'.repeat(5000)}'` }, 'bad');

// ---- examples from https://kubernetes.io/docs/reference/using-api/cel/ and the CRD validation rules docs
const docSpec: JSONSchemaProps = {
  type: 'object',
  properties: {
    minReplicas: int,
    replicas: int,
    maxReplicas: int,
    stateCounts: { type: 'object', maxProperties: 16, additionalProperties: int },
    list1: strList,
    list2: strList,
    map1: strMap,
    envars: { type: 'array', maxItems: 16, items: { type: 'object', properties: { name: str, value: str } } },
    created: { type: 'string', format: 'date-time' },
    ttl: { type: 'string', format: 'duration' },
    expired: { type: 'string', format: 'date-time' },
    health: str,
    widgets: { type: 'array', maxItems: 16, items: { type: 'object', properties: { key: str, foo: int } } },
    set1: { type: 'array', maxItems: 16, 'x-kubernetes-list-type': 'set', items: str },
    set2: { type: 'array', maxItems: 16, 'x-kubernetes-list-type': 'set', items: str },
    names: strList,
    details: strMap,
    primary: str,
    clusters: { type: 'array', maxItems: 16, items: { type: 'object', properties: { name: str } } },
    ratio: num,
    data: { type: 'string', format: 'byte', maxLength: 64 },
  },
};
const docCases: Array<[string, unknown]> = [
  [
    'self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas',
    { minReplicas: 1, replicas: 5, maxReplicas: 3 },
  ],
  ["'Available' in self.stateCounts", { stateCounts: { Ready: 1 } }],
  ['(size(self.list1) == 0) != (size(self.list2) == 0)', { list1: [], list2: [] }],
  ["!('MY_KEY' in self.map1) || self.map1['MY_KEY'].matches('^[a-zA-Z]*$')", { map1: { MY_KEY: 'abc1' } }],
  [
    "self.envars.all(e, e.name != 'MY_ENV' || e.value.matches('^[a-zA-Z]*$'))",
    { envars: [{ name: 'MY_ENV', value: 'a1' }] },
  ],
  [
    'has(self.expired) && self.created + self.ttl < self.expired',
    { created: '2024-01-01T00:00:00Z', ttl: '48h', expired: '2024-01-02T00:00:00Z' },
  ],
  ["self.health.startsWith('ok')", { health: 'degraded' }],
  ["self.widgets.exists(w, w.key == 'x' && w.foo < 10)", { widgets: [{ key: 'x', foo: 20 }] }],
  ['self.set1.all(e, !(e in self.set2))', { set1: ['a', 'b'], set2: ['b'] }],
  [
    'size(self.names) == size(self.details) && self.names.all(n, n in self.details)',
    { names: ['a', 'b'], details: { a: 'x' } },
  ],
  [
    'size(self.clusters.filter(c, c.name == self.primary)) == 1',
    { clusters: [{ name: 'a' }, { name: 'a' }], primary: 'a' },
  ],
  ['self.ratio > 0.5 && self.ratio * 2.0 < 1.5', { ratio: 0.8 }],
  ['self.ratio == 1.0', { ratio: 1 }],
  ["self.data.size() == 5 && string(self.data) == 'hello'", { data: 'aGVsbG8=' }],
  ['self.replicas > 1u', { replicas: 3 }],
  ['uint(self.replicas) > 1u', { replicas: 3 }],
  ['dyn(self.replicas) == 3.0', { replicas: 3 }],
  ['self.replicas == 3 && -self.replicas == -3', { replicas: 3 }],
  ["self.health < 'ok' || self.health >= 'zz'", { health: 'ok' }],
  ['self.list1.exists(x, x.size() > 3)', { list1: ['a', 'bb'] }],
  ['self.list1.exists_one(x, x == "a")', { list1: ['a', 'a'] }],
  ["self.list1.map(x, x + '!').filter(y, y.size() > 2) == ['bb!']", { list1: ['a', 'bb'] }],
  ['self.list1.all(x, self.list1.exists(y, x == y))', { list1: ['a', 'bb'] }],
  ['has(self.map1.k) && self.map1.k == "v"', { map1: { k: 'v' } }],
  ['has(self.map1.k)', { map1: {} }],
  ["self.?map1.k.orValue('none') == 'none'", { map1: {} }],
  ["self.map1[?'k'].orValue('none') == 'v'", { map1: { k: 'v' } }],
  ["self.list1[?0].orValue('') == 'a'", { list1: ['a'] }],
  ['self.replicas % 3 == 0 ? true : self.replicas < 2', { replicas: 4 }],
  ['timestamp(self.created).getDayOfWeek() == 1', { created: '2024-01-01T00:00:00Z' }],
  ["self.created.getHours('America/New_York') == 19", { created: '2024-01-01T00:00:00Z' }],
  ['duration(self.ttl).getMinutes() == 2880', { ttl: '48h' }],
  ["self.created - timestamp('2023-12-31T00:00:00Z') == duration('24h')", { created: '2024-01-01T00:00:00Z' }],
  ['int(self.ratio * 10.0) == 8', { ratio: 0.8 }],
  ['double(self.replicas) / 2.0 == 1.5', { replicas: 3 }],
  ["string(self.ratio) == '0.8'", { ratio: 0.8 }],
  ['self.list1 + self.list2 == ["a", "b"]', { list1: ['a'], list2: ['b'] }],
  ["self.names.join(', ').size() < 5", { names: ['alpha', 'beta'] }],
  ['self.replicas in [1, 3, 5]', { replicas: 3 }],
  ['self.map1.all(k, self.map1[k].size() < 3)', { map1: { a: 'xyz' } }],
];
for (const [rule, value] of docCases) add('docs', docSpec, rule, value);

// ---- core language details: literals, numeric semantics, error absorption, types
const coreCases: Array<[string, string]> = [
  ["'\\u00e9' == 'é' && '\\x41' == 'A' && '\\101' == 'A'", 'x'],
  ["b'\\xff'.size() == 1 && b'abc' < b'abd'", 'x'],
  ['0x10 == 16 && 1e3 == 1000.0 && 2.5e-1 == 0.25', 'x'],
  ['-7 % 3 == -1 && -7 / 2 == -3', 'x'],
  ["int('10') == 10 && double('1.5') == 1.5 && string(1.5) == '1.5' && string(true) == 'true'", 'x'],
  ['1.0 / 0.0 > 1.0e308', 'x'],
  ["'abc' < 'abd' && 'b' > 'a' && 'é'.size() == 1", 'x'],
  ['type(1) == int && type(self) == string && type([1]) == list && type({}) == map && type(1.0) == double', 'x'],
  ["{'a': 1, 'b': 2} == {'b': 2, 'a': 1}", 'x'],
  ['false && (1 / 0 == 1)', 'x'],
  ['true || (1 / 0 == 1)', 'x'],
  ['(1 / 0 == 1) || true', 'x'],
  ['(1 / 0 == 1) && false', 'x'],
  ['[1, 0].exists(x, 1 / x > 0)', 'x'],
  ['[0, 1].all(x, 1 / x > 0)', 'x'],
  ['[0, 1].exists(x, 1 / x > 5)', 'x'],
  ['18446744073709551615u > 0u', 'x'],
  ['9223372036854775807 + 1 > 0', 'x'],
  ['-9223372036854775808 - 1 < 0', 'x'],
  ['size(self) == 5 && self.size() == 5', 'héllo'],
  ["self.contains('ll') && self.endsWith('lo') && self.startsWith('h')", 'héllo'],
  ["dyn(self) == 'héllo' && dyn(1) == 1.0", 'héllo'],
  ['[1, 2, 3].filter(x, x > 1).map(x, x * 10) == [20, 30]', 'x'],
  ['[[1], [2, 3]].exists(l, l.size() == 2)', 'x'],
  ["{'a': [1, 2]}['a'][1] == 2", 'x'],
  ['duration("1h") + duration("30m") == duration("90m") && duration("-1s") < duration("0s")', 'x'],
  ['timestamp("2024-01-01T00:00:00.5Z") < timestamp("2024-01-01T00:00:01Z")', 'x'],
];
for (const [rule, value] of coreCases) add('core-details', str, rule, value);
add(
  'core-details',
  str,
  { rule: "r'a\\b'.size() == 3 &&\n'''x\ny'''.size() == 3", message: 'a rule over two lines' },
  'x',
);

// ---- int() and string() of durations and timestamps; format-typed strings in checker messages
const durationStr: JSONSchemaProps = { type: 'string', format: 'duration', maxLength: 32 };
const dateTimeStr: JSONSchemaProps = { type: 'string', format: 'date-time', maxLength: 40 };
add('conversions', durationStr, 'int(self) == 5400000000000', '1h30m');
add('conversions', durationStr, "string(self) == '5400s'", '1h30m');
add('conversions', durationStr, "string(self) == '0.000000001s'", '1ns');
add('conversions', durationStr, "string(self) == '-1.5s'", '-1500ms');
// a date-time string the format check accepts (lowercase t or z, any character before a fraction) that Go's
// time.Parse refuses is an error value with the last layout's ParseError
const dateTimeField: JSONSchemaProps = { type: 'object', properties: { b: dateTimeStr } };
for (const [rule, b] of [
  ["self.b > timestamp('2000-01-01T00:00:00Z')", '2024-01-02t03:04:05z'],
  ["self.b > timestamp('2000-01-01T00:00:00Z')", '2024-01-02T03:04:05z'],
  ["self.b > timestamp('2000-01-01T00:00:00Z')", '2024-01-02T03:04:05x5Z'],
  ['has(self.b)', '2024-01-02t03:04:05z'],
  ["self.b == timestamp('2024-01-02T02:04:05.5Z')", '2024-01-02T03:04:05,5+01:00'],
] as const) {
  add('conversions', dateTimeField, rule, { b });
}
// a duration-formatted string reads as strfmt.ParseDuration reads it: units as words, summed
add('conversions', durationStr, "self == duration('3h')", '3 hours');
add('conversions', durationStr, "self == duration('26h')", '1 day 2h');
add('conversions', durationStr, "string(self) == '180s'", '3 mins');
// a transition rule does not run on create, also where the value is of the wrong type
add(
  'runtime',
  { type: 'string', format: 'cidr', maxLength: 64, nullable: true },
  ['self.size() >= oldSelf.size()', "self.find('[0-9]+') != ''"],
  [],
);
// a wrong-typed self (an array where a formatted string is declared passes the OpenAPI type check) is an
// error value a rule meets only where it reads it: `||` absorbs it, a rule not reading it passes
const formattedStr: JSONSchemaProps = { type: 'string', format: 'email', maxLength: 64 };
for (const rule of [
  'true || self == "a"',
  'self == "a" || true',
  '1 == 1',
  '[self].size() == 1',
  'self.startsWith("a")',
  { rule: 'false', messageExpression: 'self + "x"' },
  { rule: '!oldSelf.hasValue() || oldSelf.value() == self', optionalOldSelf: true },
]) {
  add('runtime', formattedStr, rule, []);
}
// set and map lists compare and add as the API server's values do: order ignored (set items, map keys),
// `+` a union or a merge by key; the left operand's type decides (`['b', 'a'] == self` is in order)
const setOfStrings: JSONSchemaProps = { type: 'array', maxItems: 6, 'x-kubernetes-list-type': 'set', items: str };
for (const rule of [
  "self == ['b', 'a']",
  "['b', 'a'] == self",
  "self != ['b', 'a']",
  "(self + ['a', 'c']).size() == 3",
  "self + ['a', 'c'] == ['a', 'b', 'c']",
  "self in [['b', 'a']]",
  "[self] == [['b', 'a']]",
  "self.filter(x, true) == ['b', 'a']",
]) {
  add('list types', setOfStrings, rule, ['a', 'b']);
}
add('list types', setOfStrings, 'self == oldSelf', ['a', 'b', 'c'], ['c', 'b', 'a']);
add('list types', setOfStrings, "{'a': self} == {'a': oldSelf}", ['a', 'b'], ['b', 'a']);
const keyedByTwo: JSONSchemaProps = {
  type: 'array',
  maxItems: 6,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['k', 'j'],
  items: { type: 'object', required: ['k', 'j'], properties: { k: str, j: int, v: int } },
};
const twoItems = [
  { k: 'a', j: 1, v: 1 },
  { k: 'a', j: 2, v: 2 },
];
add('list types', keyedByTwo, 'self == oldSelf', twoItems, [...twoItems].reverse());
add('list types', keyedByTwo, 'self == oldSelf', twoItems, [
  { k: 'a', j: 2, v: 3 },
  { k: 'a', j: 1, v: 1 },
]);
add('list types', keyedByTwo, 'oldSelf in [self]', twoItems, [...twoItems].reverse());
add('list types', keyedByTwo, '(self + oldSelf).size() == 3 && (self + oldSelf)[0].v == 9', twoItems, [
  { k: 'a', j: 3, v: 3 },
  { k: 'a', j: 1, v: 9 },
]);
add(
  'list types',
  { type: 'object', properties: { l: keyedByTwo } },
  'self == oldSelf',
  { l: twoItems },
  { l: [...twoItems].reverse() },
);
// ratcheting correlates only declared fields: an object holding an embedded resource's or a preserved
// unknown field is never unchanged, so its failing rules stay errors on update
const holdsEmbedded: JSONSchemaProps = {
  type: 'object',
  properties: {
    r: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
  },
};
const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } };
ratchet(holdsEmbedded, '!has(self.r)', { r: configMap }, { r: configMap });
add('conversions', dateTimeStr, 'int(self) == 1', '1970-01-01T00:00:01Z');
add('conversions', dateTimeStr, 'int(self) == -1', '1969-12-31T23:59:59.5Z');
add('conversions', dateTimeStr, "string(self) == '2020-01-01T00:00:00.5Z'", '2020-01-01T00:00:00.5Z');
add('conversions', str, "int(duration(self)) > 0 && string(duration(self)) != ''", '90s');

// what cel-go refuses at runtime and JavaScript answers: ordering NaN, int('') and other strings strconv
// refuses, doubles beyond int64/uint64, bytes that are not UTF-8
add('runtime', num, 'self / 0.0 > 1.0', 0);
add('runtime', num, 'self / 0.0 <= 1', 0);
add('runtime', { type: 'array', maxItems: 4, items: num }, 'self.all(x, x / 0.0 < 1.0)', [1, 0]);
add('runtime', num, { rule: 'self > 0.0', messageExpression: "self / 0.0 < 1.0 ? 'a' : 'b'" }, 0);
for (const value of ['', ' 5', '+5', '-5', '0x10', '1_000', '5 ']) add('runtime', str, 'int(self) >= 0', value);
for (const value of ['+5', '-5', '5']) add('runtime', str, 'uint(self) >= 0u', value);
for (const value of [1e19, -9.3e18, 9.2e18]) add('runtime', num, 'int(self) != 0', value);
for (const value of [-0.5, 1.9e19, 1.5]) add('runtime', num, 'uint(self) != 0u', value);
for (const value of ['/w==', 'YWJj', 'YW+/', 'gA==']) {
  add('runtime', { type: 'string', format: 'byte', maxLength: 8 }, "string(self) != ''", value);
}
// string() of a double is Go's %g: an exponent below -4 or from 6 up, signed, two digits at least
for (const value of [1e6, 123456789, 9007199254740992, 0.00001, 0.0001, 100000, 1.5, -2.5e-7, 1e21, 1e300]) {
  add('runtime', num, { rule: "string(self) == ''", messageExpression: 'string(self)' }, value);
}
for (const expression of ['self / 0.0', '-self / 0.0', 'self * -1.0', '(self - 1.0) / 0.0']) {
  add('runtime', num, { rule: 'false', messageExpression: `string(${expression})` }, 1);
}
add('runtime', num, { rule: 'false', messageExpression: 'string(self * -1.0)' }, 0);
// an array under type: string with a format passes OpenAPI (kube-openapi's type validator); CEL refuses it
add('runtime', { type: 'object', properties: { b: { type: 'string', format: 'byte' } } }, 'self == self', { b: [] });
add(
  'runtime',
  {
    type: 'array',
    maxItems: 4,
    items: withRules({ type: 'string', format: 'ipv6', maxLength: 5 }, "self.charAt(0) == 'a'"),
  },
  'true',
  [[], ['x']],
);
// == on objects is unstructuredMap.Equal: unknown fields a node preserves and null fields count; an
// unknown field only one side has is compared only by the number of fields
const preserving: JSONSchemaProps = {
  type: 'object',
  properties: { b: { ...int, nullable: true } },
  'x-kubernetes-preserve-unknown-fields': true,
};
for (const [value, old] of [
  [
    { b: 1, zz: 1 },
    { b: 1, zz: 2 },
  ],
  [{ b: 1, zz: 1 }, { b: 1 }],
  [
    { b: 1, zz: 1 },
    { b: 1, yy: 1 },
  ],
  [
    { b: 1, zz: { a: [1, 2] } },
    { b: 1, zz: { a: [1, 2] } },
  ],
  [{ b: null }, {}],
] as const) {
  add('runtime', preserving, ['self == oldSelf', '[self] == [oldSelf]'], value, old);
}
ratchet(preserving, 'self.b > 5', { b: 1, zz: 1 }, { b: 1, zz: 1 });
ratchet(preserving, 'self.b > 5', { b: 1 }, { b: 1 });
add(
  'runtime',
  { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  'self == oldSelf',
  { a: 1 },
  { a: 1, c: 2 },
);
// a null item or value of a nullable list or map reaches the rule as null: operators and functions have no
// overload for it, == answers false, the list functions that compare look past it
const nullableInts: JSONSchemaProps = {
  type: 'object',
  maxProperties: 3,
  additionalProperties: { ...int, nullable: true },
};
for (const rule of [
  'self.all(k, self[k] > 3)',
  'self.all(k, self[k] == 3)',
  "self['a'] * 2 == 0",
  "-self['a'] == 0",
  "int(self['a']) == 0",
  "string(self['a']) == ''",
  "self['a'] != 1",
  "self['a'] in [1]",
  "[self['a']] == [1]",
]) {
  add('nulls', nullableInts, rule, { a: null });
}
const nullableIntList: JSONSchemaProps = { type: 'array', maxItems: 3, items: { ...int, nullable: true } };
for (const rule of [
  'self.all(x, x > 3)',
  'self.all(x, x == 3)',
  'self.map(x, x).size() == 1',
  'self.all(i, x, x > 0)',
  'self[0] + 1 == 2',
  'self.sum() == 0',
  'self.isSorted()',
  'self.sort() == []',
  'self.indexOf(1) == 0',
  'sets.contains(self, [1])',
]) {
  add('nulls', nullableIntList, rule, [null]);
}
// a null as a comprehension's predicate: cel-go's `&&`, `||` or `?:` of the expansion has no overload for it
const nullableBools: JSONSchemaProps = {
  type: 'object',
  maxProperties: 3,
  additionalProperties: { type: 'boolean', nullable: true },
};
for (const rule of [
  'self.all(k, v, v)',
  'self.exists(k, v, v)',
  'self.all(k, self[k])',
  'self.exists_one(k, v, v)',
  'self.existsOne(k, v, v)',
  "self.exists_one(k, v, k == 'a')",
  'self.filter(k, self[k]).size() == 1',
  'self.transformList(k, v, v, k).size() == 1',
]) {
  add('nulls', nullableBools, rule, { a: true, b: null });
}
const nullableBoolList: JSONSchemaProps = { type: 'array', maxItems: 3, items: { type: 'boolean', nullable: true } };
for (const rule of ['self.all(x, x)', 'self.exists(x, x)', 'self.exists_one(x, x)', 'self.map(x, x, x).size() == 1']) {
  add('nulls', nullableBoolList, rule, [false, null]);
}
const nullableStrings: JSONSchemaProps = {
  type: 'object',
  maxProperties: 3,
  additionalProperties: { ...str, nullable: true },
};
for (const rule of [
  "self['a'].size() == 0",
  "self['a'].startsWith('x')",
  "self['a'].lowerAscii() == ''",
  "isURL(self['a'])",
  "self['a'] + 'x' == 'x'",
  "self.all(k, self[k].matches('x'))",
]) {
  add('nulls', nullableStrings, rule, { a: null });
}
// a null field of an object with properties is an absent one (unstructuredMap.Find)
const nullableRatio: JSONSchemaProps = { type: 'object', properties: { b: { ...num, nullable: true }, c: str } };
add('runtime', nullableRatio, 'self.b / 2.0 < 1.0', { b: null, c: 'x' });
add('runtime', nullableRatio, "!has(self.b) && self.c == 'x'", { b: null, c: 'x' });
export const ADMISSION_CASES: readonly AdmissionCase[] = cases;

// ---- compile-time errors: each is one CRD schema under spec
const compileCases: CompileCase[] = [];
const bad = (group: string, schema: JSONSchemaProps, ...rules: Array<string | ValidationRule>) =>
  compileCases.push({ group, schema: withRules(schema, ...rules) });
// a rule whose program fails to instantiate (a constant conversion) still uses oldSelf: on a list's items,
// both errors
bad('macro', { type: 'array', maxItems: 4, items: withRules(str, "self == oldSelf && int('x') == 1") });
// cel-go's parser refuses a has() whose argument is not a field selection
bad('macro', { type: 'object', properties: { a: strList } }, 'has(self)');
bad('macro', { type: 'object', properties: { a: strList } }, 'has(self.a[0])');
// has() of a field the object does not declare, also one named like an Object.prototype member: cel-go
// refuses it ("undefined field"), at the has() call; and of a field of a string
const presence: JSONSchemaProps = {
  type: 'object',
  properties: { a: str, m: { type: 'object', maxProperties: 4, additionalProperties: str } },
};
bad('macro', presence, 'has(self.zzz)');
bad('macro', presence, 'has(self.constructor)');
bad('macro', presence, 'has(self.toString) || has(self.m.toString)');
bad('macro', presence, 'has(self.a.b)');
bad('macro', presence, 'has(self.m.x.y)');
bad('macro', presence, 'has(self.zzz.y)');
bad('macro', { type: 'object', properties: { a: strList } }, 'self.a.size() == 1 && has(self.a.size())');
bad('type', { type: 'object', properties: { replicas: int } }, "self.replicas == 'two'");
bad('type', { type: 'object', properties: { replicas: int } }, 'self.replicas + 1');
bad('type', { type: 'object', properties: { replicas: int } }, 'self.replicas == 3.0');
bad('type', { type: 'object', properties: { name: str } }, "self.name + 1 == 'x'");
bad('type', { type: 'object', properties: { name: str } }, 'self.nope == 1');
bad('type', { type: 'object', properties: { name: str } }, 'size(self.name) == true');
bad('type', { type: 'object', properties: { name: str } }, 'self.name.startsWith(1)');
bad('type', { type: 'object', properties: { name: str } }, 'other.name == 1');
bad('type', { type: 'object', properties: { name: str } }, '!self.name');
bad('type', str, "self.lowerAscii(1) == 'a'");
bad('type', intList, "self.isSorted() == 'yes'");
bad('type', str, "[1, 'a'].size() == 2");
bad('regex', str, "self.matches('[')");
bad('regex', str, "self.matches('(?P<x')");
bad('cost', unboundedStrList, 'self.all(x, self.all(y, x == y))');
bad('cost', { type: 'array', items: unboundedStrList }, 'self.all(x, x.all(y, self.all(z, z.size() > 0)))');
bad('cost', unboundedStrList, "self.all(x, x.contains('abc'))");
bad('cost', unboundedStrList, 'self.sort().size() > 0');
bad('cost', { type: 'array', maxItems: 100000, items: int }, 'self.distinct().size() == self.size()');
bad('cost', { type: 'array', maxItems: 2000, items: int }, 'lists.range(1000000).size() > self.size()');
bad('cost', intList, 'lists.range(self.size()).size() == self.size()');
bad('cost', intList, 'self.slice(2, 1).size() == 0');
bad(
  'cost',
  { type: 'array', maxItems: 2180, items: { type: 'string', maxLength: 8 } },
  'self.sortBy(x, x).size() >= 0',
);
bad('cost', strList, "self.first().optMap(x, x + 'b').orValue('') == 'ab'");
bad('sortBy', intList, 'self.sortBy(x, [x]).size() > 0');
bad('sortBy', intList, 'self.sortBy(1, x).size() > 0');
bad('optional', intList, 'self.first().optMap(1, 2) == optional.none()');
bad('optional', intList, 'self.first().optFlatMap(x, x) == optional.none()');
bad('optional', intList, '[[1], [true]].size() == 2');
bad('cost', { type: 'array', items: { type: 'integer' } }, 'self.map(p, p * 2).all(x, x < 1000)');
bad('cost', { type: 'object', additionalProperties: unboundedStr }, "self.all(k, self[k].matches('^[a-z]+$'))");
bad('fieldPath', { type: 'object', properties: { name: str } }, { rule: "self.name != ''", fieldPath: '.nope' });
bad('fieldPath', { type: 'object', properties: { name: str } }, { rule: "self.name != ''", fieldPath: '  ' });
bad('fieldPath', { type: 'object', properties: { name: str } }, { rule: "self.name != ''", fieldPath: '.name\n' });
bad('reason', str, { rule: "self != ''", reason: 'FieldValueTypeInvalid' as ValidationRule['reason'] });
bad(
  'reason',
  str,
  { rule: "self != ''", reason: 'Nope' as ValidationRule['reason'] },
  { rule: 'true', reason: 'FieldValueForbidden' },
);
bad('messageExpression', str, { rule: "self != ''", messageExpression: ' ' });
// A string of unknown size (a conversion's result) in a concatenation: the estimate is unbounded.
bad('messageExpression', str, { rule: "self != ''", messageExpression: "'had a value: ' + string(self == '')" });
bad('optionalOldSelf', str, { rule: "self != ''", optionalOldSelf: true });
bad('messageExpression', str, { rule: "self != ''", messageExpression: '1 + 1' });
bad('messageExpression', str, { rule: "self != ''", messageExpression: 'self.nope' });
bad(
  'messageExpression',
  { type: 'object', properties: { replicas: int } },
  { rule: 'self.replicas < 5', messageExpression: "'replicas ' + string(self.replicas) + ' is too many'" },
);
bad('messageExpression', str, {
  rule: '!format.dns1123Subdomain().validate(self).hasValue()',
  messageExpression: "format.dns1123Subdomain().validate(self).value().join(', ')",
});
bad('cost', {
  type: 'object',
  additionalProperties: withRules(str, { rule: 'self == oldSelf', message: 'value immutable' }),
});
bad(
  'cost',
  { type: 'array', items: unboundedStr },
  { rule: 'true', messageExpression: 'string(self[0]) + string(self[1]) + string(self[2])' },
);
bad('bool', str, "self + 'x'");
bad('syntax', str, 'self ==');
bad('syntax', str, "self.startsWith('a'");
bad('syntax', str, 'self..size() > 0');
bad('syntax', str, '1 +* 2 == 3');
bad('syntax', str, "self == 'unterminated");
bad('schema', str, { rule: '   ' });
bad('schema', str, { rule: "self == 'a'", message: '   ' });
// a no-break space is blank to strings.TrimSpace and not printable to strconv.Quote: printed as \u00a0
bad('schema', str, { rule: "self == 'a'", message: '\u00a0' });
bad('cost', str, "['a', self].join(',') == 'a,b'");
bad('library', { type: 'object', properties: { replicas: int } }, 'cel.bind(r, self.replicas, r * r == 9)');
bad('type', str, 'null == null && self != null');
bad('instantiation', str, 'uint(-1) == 1u');
bad('instantiation', str, "int('ten') == 10");
bad('literal', str, "duration('abc') > duration('1s')");
bad('literal', str, "timestamp('2024-13-01T00:00:00Z') < timestamp('2025-01-01T00:00:00Z')");
bad('schema', str, { rule: "self == 'a' ||\nself == 'b'" });
bad('schema', str, { rule: "self == 'a'", message: 'two\nlines' });
// the elements of a computed list (filter's result) have no declared sizes: the estimate is unbounded
bad(
  'cost',
  { type: 'array', maxItems: 16, items: { type: 'object', properties: { name: str, value: str } } },
  "self.filter(e, e.name == 'MY_ENV').all(e, e.value.matches('^[a-zA-Z]*$'))",
);
bad('type', str, "'%s is %d years'.format([self, 3]) == 'tom is 3 years'");
bad('type', str, "'%s is %d years'.format([self, dyn(3)]) == 'tom is 3 years'");
bad('type', str, 'quantity(self).sign() == 1');
bad('oldSelf', { type: 'array', items: withRules(str, { rule: 'self == oldSelf', message: 'item immutable' }) });

bad('type', { type: 'string', format: 'duration', maxLength: 10 }, "self.startsWith('a')");
bad('type', str, '(self.size() > 0 ? self : 1) == 1');
bad(
  'type',
  { type: 'array', maxItems: 3, items: { type: 'string', format: 'byte', maxLength: 4 } },
  "sets.contains(self, ['a'])",
);
bad('type', num, 'math.ceil(self) == self');
bad('type', str, "base64.decode(self).size() > 1 && self.startsWith('a')");
bad('type', { type: 'string', format: 'date', maxLength: 10 }, "self.contains('-')");
bad('type', { type: 'string', format: 'date-time', maxLength: 40 }, 'self.size() > 1');
// cel-go's checker goes on after a type error: every error, sorted by where it is
bad(
  'type',
  { type: 'object', properties: { name: str, replicas: int } },
  "self.name + 1 == 'x' && self.replicas == 'two'",
);
bad(
  'type',
  { type: 'object', properties: { name: str } },
  "size(1) + size(true) == self.nope.size() && self.name.size() == 'a'",
);
bad('type', { type: 'object', properties: { name: str, replicas: int } }, 'self.replicas || self.name');
bad('type', intList, "self.all(x, x + 'a' == 1) || self.map(x, x.size()) == [1]");
bad('type', str, { rule: 'self == oldSelf.orValue(1)', optionalOldSelf: true });
bad('type', str, { rule: 'oldSelf.size() > 0', optionalOldSelf: true });
bad('type', str, { rule: 'oldSelf.or(optional.of(1)).hasValue()', optionalOldSelf: true });
bad('type', intList, "self.size(1) == 1 && self.join(1) == ''");
// static cost: a messageExpression is priced per call (not times its node's cardinality); `-5` is a literal;
// a comprehension over a list of at most 0 items costs nothing per item; indexOf on a string scans it;
// string() and bytes() of bytes, strings and int-or-string scan their argument
bad('cost', { type: 'array', items: withRules(str, { rule: "self != ''", messageExpression: "'bad: ' + self" }) });
bad('cost', { type: 'array', items: int }, 'self.all(x, x - 1 >= -5)');
bad('cost', { type: 'array', maxItems: 0, items: intList }, 'self.all(x, lists.range(size(x)).all(i, i < 5))');
bad('cost', { type: 'array', maxItems: 3, items: unboundedStr }, "self.all(x, x.indexOf('b') < 2)");
bad('cost', { type: 'array', items: { 'x-kubernetes-int-or-string': true } }, "self.all(x, string(x).endsWith('%'))");
bad('cost', { type: 'string', format: 'byte' }, 'string(self).size() < 3 && bytes(string(self)).size() < 3');
bad('instantiation', str, "int('') == 0");
bad('instantiation', str, 'int(1e19) == 0');
bad('instantiation', str, "string(b'\\xff') == ''");
export const COMPILE_CASES: readonly CompileCase[] = compileCases;
