/**
 * The Kubernetes CEL libraries and the cel-go extensions the API server enables, checked against the upstream
 * test tables and documentation examples:
 * - cases ported from k8s.io/apiserver@v0.37.2/pkg/cel/library/{quantity,ip,cidr,semver,format}_test.go
 *   ([expression, kind, expected]; kind: value | int | double | none (optional.none()) | error (runtime error text
 *   contains) | compile (rejected when checked));
 * - the examples in the doc comments of k8s.io/apiserver@v0.37.2/pkg/cel/library/{lists,regex,urls}.go and
 *   github.com/google/cel-go@v0.29.2/ext/{strings,sets,comprehensions}.go.
 */
import { expect } from 'chai';
import { evaluateExpression } from '../../crd/cel/index.ts';

type Kind = 'value' | 'int' | 'double' | 'none' | 'error' | 'compile';

const UPSTREAM_TESTS: Record<string, Array<[string, Kind, unknown]>> = {
  // k8s.io/apiserver@v0.37.2/pkg/cel/library/quantity_test.go
  'quantity_test.go': [
    ['isQuantity("20")', 'value', true],
    ['isQuantity("20M")', 'value', true],
    ['isQuantity("20Mi")', 'value', true],
    ['isQuantity("20Mo")', 'value', false],
    ['isQuantity("10Mm")', 'value', false],
    ['quantity("200M") == quantity("200M")', 'value', true],
    ['quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', 'value', true],
    [
      'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")',
      'value',
      true,
    ],
    ['quantity("200M") == quantity("0.3G")', 'value', false],
    ['quantity("50M").isLessThan(quantity("50Mi"))', 'value', true],
    ['quantity("50M").isLessThan(quantity("100M"))', 'value', true],
    ['quantity("100M").isLessThan(quantity("50M"))', 'value', false],
    ['quantity("50Mi").isGreaterThan(quantity("50M"))', 'value', true],
    ['quantity("150Mi").isGreaterThan(quantity("100Mi"))', 'value', true],
    ['quantity("50M").isGreaterThan(quantity("100M"))', 'value', false],
    ['quantity("200M").compareTo(quantity("0.2G"))', 'int', 0],
    ['quantity("50M").compareTo(quantity("50Mi"))', 'int', -1],
    ['quantity("50Mi").compareTo(quantity("50M"))', 'int', 1],
    ['quantity("50k").add(quantity("20")) == quantity("50.02k")', 'value', true],
    ['quantity("50k").add(20).isLessThan(quantity("50020"))', 'value', false],
    ['quantity("50k").sub(quantity("20")) == quantity("49.98k")', 'value', true],
    ['quantity("50k").sub(20) == quantity("49980")', 'value', true],
    ['quantity("50k").add(20).sub(quantity("100k")).asInteger()', 'int', -49980],
    ['quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 'int', 20],
    ['quantity("50k").asInteger()', 'int', 50000],
    ['quantity("9999999999999999999999999999999999999G").isInteger()', 'value', false],
    ['quantity("50").isInteger()', 'value', true],
    ['quantity("50.703k").asApproximateFloat()', 'double', 50703.0],
    [
      '[quantity("9999999999999999999999999999999999999")].all(x, x.add(quantity("1")).compareTo(x.add(quantity("2"))) == -1)',
      'value',
      true,
    ],
  ],
  // k8s.io/apiserver@v0.37.2/pkg/cel/library/ip_test.go
  'ip_test.go': [
    [
      'ip("192.168.0.1.0")',
      'error',
      'IP Address "192.168.0.1.0" parse error during conversion from string: ParseAddr("192.168.0.1.0"): IPv4 address too long',
    ],
    ['isIP("192.168.0.1")', 'value', true],
    ['isIP("192.168.0.1.0")', 'value', false],
    ['ip.isCanonical("127.0.0.1")', 'value', true],
    [
      'ip.isCanonical("127.0.0.1.0")',
      'error',
      'IP Address "127.0.0.1.0" parse error during conversion from string: ParseAddr("127.0.0.1.0"): IPv4 address too long',
    ],
    ['ip("192.168.0.1").family()', 'int', 4],
    ['ip("0.0.0.0").isUnspecified()', 'value', true],
    ['ip("127.0.0.1").isUnspecified()', 'value', false],
    ['ip("127.0.0.1").isLoopback()', 'value', true],
    ['ip("1.2.3.4").isLoopback()', 'value', false],
    ['ip("224.0.0.1").isLinkLocalMulticast()', 'value', true],
    ['ip("224.0.1.1").isLinkLocalMulticast()', 'value', false],
    ['ip("169.254.169.254").isLinkLocalUnicast()', 'value', true],
    ['ip("192.168.0.1").isLinkLocalUnicast()', 'value', false],
    ['ip("192.168.0.1").isGlobalUnicast()', 'value', true],
    ['ip("255.255.255.255").isGlobalUnicast()', 'value', false],
    [
      'ip("2001:db8:::68")',
      'error',
      'IP Address "2001:db8:::68" parse error during conversion from string: ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")',
    ],
    ['isIP("2001:db8::68")', 'value', true],
    ['isIP("2001:db8:::68")', 'value', false],
    ['ip.isCanonical("2001:db8::68")', 'value', true],
    ['ip.isCanonical("2001:DB8::68")', 'value', false],
    [
      'ip.isCanonical("2001:db8:::68")',
      'error',
      'IP Address "2001:db8:::68" parse error during conversion from string: ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")',
    ],
    ['ip("2001:db8::68").family()', 'int', 6],
    ['ip("::").isUnspecified()', 'value', true],
    ['ip("::1").isUnspecified()', 'value', false],
    ['ip("::1").isLoopback()', 'value', true],
    ['ip("2001:db8::abcd").isLoopback()', 'value', false],
    ['ip("ff02::1").isLinkLocalMulticast()', 'value', true],
    ['ip("fd00::1").isLinkLocalMulticast()', 'value', false],
    ['ip("fe80::1").isLinkLocalUnicast()', 'value', true],
    ['ip("fd80::1").isLinkLocalUnicast()', 'value', false],
    ['ip("2001:db8::abcd").isGlobalUnicast()', 'value', true],
    ['ip("ff00::1").isGlobalUnicast()', 'value', false],
    ['isIP(cidr("192.168.0.0/24"))', 'compile', null],
    ['string(ip("192.168.0.1"))', 'value', '192.168.0.1'],
    ['type(ip("192.168.0.1")) == net.IP', 'value', true],
  ],
  // k8s.io/apiserver@v0.37.2/pkg/cel/library/cidr_test.go
  'cidr_test.go': [
    [
      'cidr("192.168.0.0/")',
      'error',
      'network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after slash: ""',
    ],
    ['cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))', 'value', true],
    ['cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))', 'value', false],
    ['cidr("192.168.0.0/24").containsIP("192.168.0.1")', 'value', true],
    ['cidr("192.168.0.0/24").containsIP("192.168.1.1")', 'value', false],
    ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))', 'value', true],
    ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.1/32"))', 'value', true],
    ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))', 'value', false],
    ['cidr("192.168.0.0/24").containsCIDR(cidr("192.169.0.1/32"))', 'value', false],
    ['cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")', 'value', true],
    ['cidr("192.168.0.0/24").containsCIDR("192.168.0.0/23")', 'value', false],
    ['cidr("192.168.0.0/24").prefixLength()', 'int', 24],
    [
      'cidr("2001:db8::/")',
      'error',
      'network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("2001:db8::/"): bad bits after slash: ""',
    ],
    ['cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', 'value', true],
    ['cidr("2001:db8::/32").containsIP(ip("2001:dc8::1"))', 'value', false],
    ['cidr("2001:db8::/32").containsIP("2001:db8::1")', 'value', true],
    ['cidr("2001:db8::/32").containsIP("2001:dc8::1")', 'value', false],
    ['cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/33"))', 'value', true],
    ['cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/31"))', 'value', false],
    ['cidr("2001:db8::/32").containsCIDR("2001:db8::/33")', 'value', true],
    ['cidr("2001:db8::/32").containsCIDR("2001:db8::/31")', 'value', false],
    ['cidr("2001:db8::/32").prefixLength()', 'int', 32],
    ['string(cidr("192.168.0.0/24"))', 'value', '192.168.0.0/24'],
    ['type(cidr("192.168.0.0/24")) == net.CIDR', 'value', true],
  ],
  // k8s.io/apiserver@v0.37.2/pkg/cel/library/semver_test.go
  'semver_test.go': [
    ['isSemver("1.2.3-beta.1+build.1")', 'value', true],
    ['isSemver("")', 'value', false],
    ['isSemver("v1.0.0")', 'value', false],
    ['isSemver(" 1.0.0")', 'value', false],
    ['isSemver("1. 0.0")', 'value', false],
    ['isSemver("1.0.0 ")', 'value', false],
    ['isSemver("01.01.01")', 'value', false],
    ['isSemver("1")', 'value', false],
    ['isSemver("1.1")', 'value', false],
    ['isSemver("", true)', 'value', false],
    ['isSemver(" 1.0.0", true)', 'value', false],
    ['isSemver("1. 0.0", true)', 'value', false],
    ['isSemver("1.0.0 ", true)', 'value', false],
    ['isSemver("v1.0.0", true)', 'value', true],
    ['isSemver("01.01.01", true)', 'value', true],
    ['isSemver("1", true)', 'value', true],
    ['isSemver("1.1", true)', 'value', true],
    ['semver("v01.01", true) == semver("1.1.0")', 'value', true],
    ['semver("1.2.3") == semver("1.2.3")', 'value', true],
    ['semver("1.2.3") == semver("1.0.0")', 'value', false],
    ['semver("1.0.0").isLessThan(semver("1.2.3"))', 'value', true],
    ['semver("1.0.0").isLessThan(semver("1.0.0"))', 'value', false],
    ['semver("1.2.3").isGreaterThan(semver("1.0.0"))', 'value', true],
    ['semver("1.0.0").isGreaterThan(semver("1.0.0"))', 'value', false],
    ['semver("1.2.3").compareTo(semver("1.2.3"))', 'int', 0],
    ['semver("1.0.0").compareTo(semver("1.2.3"))', 'int', -1],
    ['semver("1.2.3").compareTo(semver("1.0.0"))', 'int', 1],
    ['semver("1.2.3").major()', 'int', 1],
    ['semver("1.2.3").minor()', 'int', 2],
    ['semver("1.2.3").patch()', 'int', 3],
  ],
  // k8s.io/apiserver@v0.37.2/pkg/cel/library/format_test.go
  'format_test.go': [
    ['format.dns1123Label().validate("my-label-name")', 'none', null],
    ['format.dns1123Subdomain().validate("apiextensions.k8s.io")', 'none', null],
    ['format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")', 'none', null],
    ['format.dns1123LabelPrefix().validate("my-label-prefix-")', 'none', null],
    ['format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")', 'none', null],
    ['format.dns1035LabelPrefix().validate("my-label-prefix-")', 'none', null],
    ['format.uri().validate("http://example.com")', 'none', null],
    ['format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")', 'none', null],
    ['format.byte().validate("aGVsbG8=")', 'none', null],
    ['format.date().validate("2021-01-01")', 'none', null],
    ['format.datetime().validate("2021-01-01T00:00:00Z")', 'none', null],
    ['format.dns1123Label().validate("my-label-name")', 'none', null],
    ['format.dns1123Subdomain().validate("example.com")', 'none', null],
    ['format.dns1035Label().validate("my-label-name")', 'none', null],
    ['format.qualifiedName().validate("my.name")', 'none', null],
    ['format.byte().validate("aGVsbG8=")', 'none', null],
    ['format.date().validate("2020-01-01")', 'none', null],
    ['format.datetime().validate("2020-01-01T00:00:00Z")', 'none', null],
    ['format.named("unknown").hasValue()', 'value', false],
    ['format.labelValue().validate("my-cool-label-Value")', 'none', null],
  ],
};

function check(expr: string, kind: Kind, expected: unknown): void {
  const result = evaluateExpression(expr);
  switch (kind) {
    case 'error':
      expect(result, expr)
        .to.have.property('error')
        .that.includes(expected as string);
      break;
    case 'compile':
      expect(result, expr)
        .to.have.property('error')
        .that.matches(/^ERROR: <input>:/);
      break;
    case 'none':
      expect(result, expr).to.deep.equal({ value: null });
      break;
    default:
      expect(result, expr).to.deep.equal({ value: expected });
  }
}

describe('cel libraries: upstream Kubernetes test tables', () => {
  for (const [file, cases] of Object.entries(UPSTREAM_TESTS)) {
    it(`${file}: ${cases.length} cases`, () => {
      for (const [expr, kind, expected] of cases) check(expr, kind, expected);
    });
  }
});

/** [expression, JSON value] from the doc comments of the upstream sources named in each group. */
const DOC_EXAMPLES: Record<string, Array<[string, unknown]>> = {
  // k8s.io/apiserver@v0.37.2/pkg/cel/library/lists.go
  lists: [
    ['[1, 2, 3].isSorted()', true],
    ["['a', 'b', 'b', 'c'].isSorted()", true],
    ['[2.0, 1.0].isSorted()', false],
    ['[1].isSorted()', true],
    ['[1, 3].sum()', 4],
    ['[1.0, 3.0].sum()', 4],
    ["[duration('1m'), duration('1s')].sum() == duration('1m1s')", true],
    ['[1, 3].min()', 1],
    ['[1, 3].max()', 3],
    ['[1].min()', 1],
    ['[1, 2, 2, 3].indexOf(2)', 1],
    ["['a', 'b', 'b', 'c'].lastIndexOf('b')", 2],
    ['[1.0].indexOf(1.1)', -1],
  ],
  // k8s.io/apiserver@v0.37.2/pkg/cel/library/regex.go
  regex: [
    ["'abc 123'.find('[0-9]+')", '123'],
    ["'abc 123'.find('xyz')", ''],
    ["'123 abc 456'.findAll('[0-9]+')", ['123', '456']],
    ["'123 abc 456'.findAll('[0-9]+', 1)", ['123']],
    ["'123 abc 456'.findAll('xyz')", []],
  ],
  // k8s.io/apiserver@v0.37.2/pkg/cel/library/urls.go
  urls: [
    ["isURL('https://user:pass@example.com:80/path?query=val#fragment')", true],
    ["isURL('/absolute-path')", true],
    ["isURL('https://a:b:c/')", false],
    ["isURL('../relative-path')", false],
    ["url('/path').getScheme()", ''],
    ["url('https://example.com/').getScheme()", 'https'],
    ["url('https://example.com:80/').getHost()", 'example.com:80'],
    ["url('https://example.com/').getHost()", 'example.com'],
    ["url('https://[::1]:80/').getHost()", '[::1]:80'],
    ["url('https://[::1]/').getHost()", '[::1]'],
    ["url('/path').getHost()", ''],
    ["url('https://example.com:80/').getHostname()", 'example.com'],
    ["url('https://127.0.0.1:80/').getHostname()", '127.0.0.1'],
    ["url('https://[::1]:80/').getHostname()", '::1'],
    ["url('/path').getHostname()", ''],
    ["url('https://example.com:80/').getPort()", '80'],
    ["url('https://example.com/').getPort()", ''],
    ["url('/path').getPort()", ''],
    ["url('https://example.com/path').getEscapedPath()", '/path'],
    ["url('https://example.com/path with spaces/').getEscapedPath()", '/path%20with%20spaces/'],
    ["url('https://example.com').getEscapedPath()", ''],
    ["url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", { k1: ['a'], k2: ['b', 'c'] }],
    [
      "url('https://example.com/path?key with spaces=value with spaces').getQuery()",
      { 'key with spaces': ['value with spaces'] },
    ],
    ["url('https://example.com/path?').getQuery()", {}],
    ["url('https://example.com/path').getQuery()", {}],
  ],
  // github.com/google/cel-go@v0.29.2/ext/strings.go
  strings: [
    ['"this is a string: %s\\nand an integer: %d".format(["str", 42])', 'this is a string: str\nand an integer: 42'],
    ['"a double substituted with %%s: %s".format([64.2])', 'a double substituted with %s: 64.2'],
    ['"%f".format([3.14])', '3.140000'],
    ['"26 in hex: %x".format([26])', '26 in hex: 1a'],
    ['"26 in hex (uppercase): %X".format([26])', '26 in hex (uppercase): 1A'],
    ['"30 in octal: %o".format([30])', '30 in octal: 36'],
    ['"5 in binary: %b".format([5])', '5 in binary: 101'],
    ['"duration: %s".format([duration("1h45m47s")])', 'duration: 6347s'],
    ['"timestamp: %s".format([timestamp("2023-02-03T23:31:20+00:00")])', 'timestamp: 2023-02-03T23:31:20Z'],
    ["'hello mellow'.indexOf('')", 0],
    ["'hello mellow'.indexOf('ello')", 1],
    ["'hello mellow'.indexOf('jello')", -1],
    ["'hello mellow'.indexOf('', 2)", 2],
    ["'hello mellow'.indexOf('ello', 2)", 7],
    ["'hello mellow'.indexOf('ello', 20)", -1],
    ["['hello', 'mellow'].join()", 'hellomellow'],
    ["['hello', 'mellow'].join(' ')", 'hello mellow'],
    ["'hello mellow'.lastIndexOf('')", 12],
    ["'hello mellow'.lastIndexOf('ello')", 7],
    ["'hello mellow'.lastIndexOf('jello')", -1],
    ["'hello mellow'.lastIndexOf('ello', 6)", 1],
    ["'hello mellow'.lastIndexOf('ello', 20)", -1],
    ["'TacoCat'.lowerAscii()", 'tacocat'],
    ["'TacoCÆt Xii'.lowerAscii()", 'tacocÆt xii'],
    ['strings.quote(\'single-quote with "double quote"\')', '"single-quote with \\"double quote\\""'],
    ['strings.quote("two escape sequences \\a\\n")', '"two escape sequences \\a\\n"'],
    ["'hello hello'.replace('he', 'we')", 'wello wello'],
    ["'hello hello'.replace('he', 'we', -1)", 'wello wello'],
    ["'hello hello'.replace('he', 'we', 1)", 'wello hello'],
    ["'hello hello'.replace('he', 'we', 0)", 'hello hello'],
    ["'hello hello'.replace('', '_')", '_h_e_l_l_o_ _h_e_l_l_o_'],
    ["'hello hello'.replace('h', '')", 'ello ello'],
    ["'hello hello hello'.split(' ')", ['hello', 'hello', 'hello']],
    ["'hello hello hello'.split(' ', 0)", []],
    ["'hello hello hello'.split(' ', 1)", ['hello hello hello']],
    ["'hello hello hello'.split(' ', 2)", ['hello', 'hello hello']],
    ["'hello hello hello'.split(' ', -1)", ['hello', 'hello', 'hello']],
    ["'tacocat'.substring(4)", 'cat'],
    ["'tacocat'.substring(0, 4)", 'taco'],
    ["'  \\ttrim\\n    '.trim()", 'trim'],
    ["'TacoCat'.upperAscii()", 'TACOCAT'],
    ["'TacoCÆt Xii'.upperAscii()", 'TACOCÆT XII'],
    ["'tacocat'.charAt(4)", 'c'],
    ["'tacocat'.charAt(7)", ''],
  ],
  // github.com/google/cel-go@v0.29.2/ext/sets.go
  sets: [
    ['sets.contains([], [])', true],
    ['sets.contains([1, 2, 3, 4], [2, 3])', true],
    ['sets.equivalent([], [])', true],
    ['sets.equivalent([1], [1, 1])', true],
    ['sets.equivalent([1, 2, 3], [3, 2, 1])', true],
    ['sets.intersects([1], [])', false],
    ['sets.intersects([1], [1, 2])', true],
    ['sets.intersects([[1], [2, 3]], [[1, 2], [2, 3]])', true],
  ],
  // github.com/google/cel-go@v0.29.2/ext/comprehensions.go
  comprehensions: [
    ['[1, 2, 3].all(i, j, i < j)', true],
    ["{'hello': 'world', 'taco': 'taco'}.all(k, v, k != v)", false],
    ["{'h': ['hello', 'hi'], 'j': ['joke', 'jog']}.all(k, vals, vals.all(v, v.startsWith(k)))", true],
    ["{'greeting': 'hello', 'farewell': 'goodbye'}.exists(k, v, k.startsWith('good') || v.endsWith('bye'))", true],
    ['[1, 2, 4, 8, 16].exists(i, v, v == 1024 && i == 10)', false],
    ['[1, 2, 1, 3, 1, 4].existsOne(i, v, i == 1 || v == 1)', false],
    ['[1, 1, 2, 2, 3, 3].existsOne(i, v, i == 2 && v == 2)', true],
    ["{'i': 0, 'j': 1, 'k': 2}.existsOne(i, v, i == 'l' || v == 1)", true],
    ['[1, 2, 3].transformList(indexVar, valueVar, (indexVar * valueVar) + valueVar)', [1, 4, 9]],
    ['[1, 2, 3].transformList(indexVar, valueVar, indexVar % 2 == 0, (indexVar * valueVar) + valueVar)', [1, 9]],
    ["{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(k, _, k)", ['greeting', 'farewell']],
    ["{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(_, v, v)", ['hello', 'goodbye']],
    ['[1, 2, 3].transformMap(indexVar, valueVar, (indexVar * valueVar) + valueVar)', { 0: 1, 1: 4, 2: 9 }],
    ['[1, 2, 3].transformMap(indexVar, valueVar, indexVar % 2 == 0, (indexVar * valueVar) + valueVar)', { 0: 1, 2: 9 }],
    ["{'greeting': 'hello'}.transformMap(k, v, v + '!')", { greeting: 'hello!' }],
    ["{'greeting': 'hello'}.transformMapEntry(keyVar, valueVar, {valueVar: keyVar})", { hello: 'greeting' }],
  ],
};

describe('cel libraries: upstream documentation examples', () => {
  for (const [group, examples] of Object.entries(DOC_EXAMPLES)) {
    it(`${group}: ${examples.length} examples`, () => {
      for (const [expr, expected] of examples)
        expect(evaluateExpression(expr), expr).to.deep.equal({ value: expected });
    });
  }
});
