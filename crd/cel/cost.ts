/**
 * Cost of a CEL expression in cel-go's units. The static estimate follows cel-go's checker/cost.go (coster) and the
 * Kubernetes CostEstimator (k8s.io/apiserver@v0.37.2/pkg/cel/library/cost.go, EstimateCallCost): identifiers 1,
 * selections on objects/maps 1, literals 0, list/map literals 10/30, comprehensions range x (step + condition),
 * string scans 0.1 per character, regexes x 0.25 per pattern character, presence tests free. Sizes come from
 * maxItems/maxLength/maxProperties (SizeNode over declaration types) or, for the runtime check, from the actual
 * object (the runtime cost is approximated by this estimate with actual sizes).
 */
import { SCALAR_TYPES } from './library/lists.ts';

/** Size information for a value reachable from a variable: its size and the nodes below it. */
export interface SizeNode {
  /** Upper bound of elements / characters / entries (Infinity when unknown). */
  size(): number;
  field(name: string): SizeNode | undefined;
  elem(): SizeNode | undefined;
  key(): SizeNode | undefined;
  /** True when the size derives from a variable's declared type (cel-go: the node has a path); list functions of the Kubernetes estimator only know element sizes then. */
  fromPath?: boolean;
}

interface Node {
  op: string;
  args: unknown;
  checkedType?: { kind?: string; name?: string; valueType?: { name?: string; kind?: string } };
}

const STRING_FACTOR = 0.1;
const REGEX_FACTOR = 0.25;
const MAX_NAME_FORMAT_REGEX_SIZE = 128;
const UNKNOWN: SizeNode = { size: () => Infinity, field: () => undefined, elem: () => undefined, key: () => undefined };

const isNode = (x: unknown): x is Node => typeof x === 'object' && x !== null && 'op' in x && 'args' in x;
const factor = (size: number, f: number) => (size === Infinity ? Infinity : Math.ceil(size * f));
/** Sizes of values nothing is known about: Infinity for the static estimate (cel-go: MaxUint64), 0 at runtime. */
const sizeOf = (n: SizeNode | undefined, ctx: Ctx) => {
  const v = n ? n.size() : Infinity;
  return v === Infinity ? ctx.unknown : v;
};
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

export function fixedSize(n: number, elem?: SizeNode): SizeNode {
  return { size: () => n, field: () => undefined, elem: () => elem, key: () => undefined };
}

type Scope = ReadonlyMap<string, SizeNode | undefined>;
interface Ctx {
  vars: Scope;
  unknown: number;
}

interface Estimate {
  cost: number;
  size?: SizeNode;
}

function runes(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** 'string', 'bytes', 'int', ... for primitives; 'list', 'map', 'message', 'dyn', 'optional' otherwise. */
function kindOf(node: Node): string | undefined {
  const t = node.checkedType;
  return t?.kind === 'primitive' ? t.name : t?.kind;
}

const SCALAR_KINDS: ReadonlySet<string> = new Set(SCALAR_TYPES);

/** computeTypeSize in cel-go: scalars (and optionals of scalars) have size 1 when nothing else is known. */
function isScalar(t: Node['checkedType']): boolean {
  if (!t) return false;
  if (t.kind === 'optional') return SCALAR_KINDS.has(t.valueType?.name ?? '');
  return SCALAR_KINDS.has(t.name ?? '');
}

/** `-` written right before an int or double literal (CEL's `sign=MINUS? NUM_INT` and `NUM_FLOAT`). */
function isNegativeLiteral(node: Node & { start?: number; input?: string }): boolean {
  const operand = node.args as (Node & { start?: number }) | undefined;
  if (!isNode(operand) || operand.op !== 'value') return false;
  if (typeof operand.args !== 'bigint' && typeof operand.args !== 'number') return false;
  const between = node.input?.slice((node.start ?? 0) + 1, operand.start ?? 0);
  return between !== undefined && between.trim() === '';
}

/** multiplyUint64 in cel-go: a count of 0 costs nothing, however costly each step (Infinity saturates). */
const times = (n: number, step: number) => (n === 0 || step === 0 ? 0 : n * step);

function walk(node: unknown, ctx: Ctx): Estimate {
  const estimate = walkNode(node, ctx);
  if (estimate.size === undefined && isNode(node) && isScalar(node.checkedType))
    return { ...estimate, size: fixedSize(1) };
  return estimate;
}

function walkNode(node: unknown, ctx: Ctx): Estimate {
  if (!isNode(node)) return { cost: 0 };
  const a = node.args;
  switch (node.op) {
    case 'value':
      if (typeof a === 'string') return { cost: 0, size: fixedSize(runes(a)) };
      if (a instanceof Uint8Array) return { cost: 0, size: fixedSize(a.length) };
      return { cost: 0, size: fixedSize(1) };
    case 'id':
      // cel-go sizes identifiers by path; the API server's size estimator ignores the first path element, so
      // an identifier that is not a variable (a type name like `int`) is sized like `self`.
      return { cost: 1, size: ctx.vars.has(a as string) ? ctx.vars.get(a as string) : ctx.vars.get('self') };
    case '.':
    case '.?': {
      const [operand, name] = a as [Node, string];
      const o = walk(operand, ctx);
      const k = kindOf(operand);
      const selectCost = k === 'message' || k === 'map' || k === 'dyn' || k === undefined ? 1 : 0;
      return { cost: o.cost + selectCost, size: o.size?.field(name) };
    }
    case '[]':
    case '[?]': {
      const [operand, index] = a as [Node, Node];
      const o = walk(operand, ctx);
      const i = walk(index, ctx);
      return { cost: o.cost + i.cost + 1, size: o.size?.elem() ?? pathlessElement(o.size, ctx) };
    }
    case 'list': {
      const items = (a as Node[]).map((x) => walk(x, ctx));
      const maxElem = Math.max(0, ...items.map((x) => sizeOf(x.size, ctx)));
      return { cost: 10 + sum(items.map((x) => x.cost)), size: fixedSize(items.length, fixedSize(maxElem)) };
    }
    case 'map': {
      const entries = (a as Array<[Node, Node]>).map(([k, v]) => [walk(k, ctx), walk(v, ctx)] as const);
      return { cost: 30 + sum(entries.map(([k, v]) => k.cost + v.cost)), size: fixedSize(entries.length) };
    }
    case '||':
    case '&&': {
      const [l, r] = (a as Node[]).map((x) => walk(x, ctx)) as [Estimate, Estimate];
      return { cost: l.cost + r.cost };
    }
    case '?:': {
      const [c, t, f] = (a as Node[]).map((x) => walk(x, ctx)) as [Estimate, Estimate, Estimate];
      return {
        cost: c.cost + Math.max(t.cost, f.cost),
        size: sizeOf(t.size, ctx) >= sizeOf(f.size, ctx) ? t.size : f.size,
      };
    }
    case '!_':
      return { cost: walk(a, ctx).cost + 1 };
    case '-_':
      // cel-go's grammar reads `-5` and `-2.5` as one literal: a negation costs only on anything else.
      return { cost: walk(a, ctx).cost + (isNegativeLiteral(node) ? 0 : 1) };
    case 'call':
      return call((a as [string, Node[]])[0], undefined, (a as [string, Node[]])[1], ctx);
    case 'rcall': {
      const [name, receiver, args] = a as [string, Node, Node[]];
      return call(name, receiver, args, ctx);
    }
    default:
      return binary(node, ctx);
  }
}

/**
 * The element of a list or map whose size knows none: cel-go sizes it by the path `<operand's path>.@items`. A
 * declared value's element without a size stays unknown; an operand without a path (a call's result, such as
 * `format.dns1123Label().validate(self).value()`) leaves the path `@items`, which the API server's size
 * estimator resolves from its root after dropping the first element: the element is sized like `self`.
 */
function pathlessElement(operand: SizeNode | undefined, ctx: Ctx): SizeNode | undefined {
  return operand?.fromPath ? undefined : ctx.vars.get('self');
}

/** The cost of a binary operator: its operands' costs plus the operator's. */
function binary(node: Node, ctx: Ctx): Estimate {
  const a = node.args;
  if (!Array.isArray(a) || a.length !== 2) return { cost: 1 };
  const [ln, rn] = a as [Node, Node];
  const l = walk(ln, ctx);
  const r = walk(rn, ctx);
  const args = l.cost + r.cost;
  switch (node.op) {
    case '==':
    case '!=': {
      // the Kubernetes estimator prices equality of its opaque types (EstimateCallCost "_==_")
      const t = ln.checkedType?.name ?? '';
      if (OPAQUE_EQUALITY_COST[t] !== undefined) return { cost: (OPAQUE_EQUALITY_COST[t] as number) + args };
      return { cost: factor(Math.min(sizeOf(l.size, ctx), sizeOf(r.size, ctx)), STRING_FACTOR) + args };
    }
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const k = kindOf(ln);
      if (k === 'string' || k === 'bytes')
        return { cost: factor(Math.min(sizeOf(l.size, ctx), sizeOf(r.size, ctx)), STRING_FACTOR) + args };
      return { cost: 1 + args };
    }
    case '+': {
      const k = kindOf(ln);
      const total = sizeOf(l.size, ctx) + sizeOf(r.size, ctx);
      if (k === 'string' || k === 'bytes') return { cost: factor(total, STRING_FACTOR) + args, size: fixedSize(total) };
      if (k === 'list') return { cost: 1 + args, size: fixedSize(total, l.size?.elem() ?? r.size?.elem()) };
      return { cost: 1 + args };
    }
    case 'in':
      return { cost: (kindOf(rn) === 'list' ? sizeOf(r.size, ctx) : 1) + args };
    default:
      return { cost: 1 + args };
  }
}

const OPAQUE_EQUALITY_COST: Record<string, number> = {
  'kubernetes.Quantity': 1,
  'kubernetes.Semver': 1,
  'net.IP': 1,
  'net.CIDR': 1,
  'kubernetes.NamedFormat': Math.ceil(64 * STRING_FACTOR),
  'kubernetes.URL': 1,
};

const ONE_VAR_MACROS: Record<string, (step: number) => number> = {
  // per iteration: loop step + loop condition, from the macro expansions in cel-go parser/macro.go
  all: (p) => 1 + p + 2,
  exists: (p) => 1 + p + 3,
  exists_one: (p) => p + 2,
  map: (t) => 12 + t,
  filter: (p) => p + 13,
};
const TWO_VAR_MACROS: Record<string, (parts: number[]) => number> = {
  all: ([p = 0]) => 1 + p + 2,
  exists: ([p = 0]) => 1 + p + 3,
  existsOne: ([p = 0]) => p + 2,
  transformList: (parts) => (parts.length === 2 ? (parts[0] ?? 0) + 13 + (parts[1] ?? 0) : 12 + (parts[0] ?? 0)),
  transformMap: (parts) => (parts.length === 2 ? (parts[0] ?? 0) + 2 + (parts[1] ?? 0) : 2 + (parts[0] ?? 0)),
  transformMapEntry: (parts) => (parts.length === 2 ? (parts[0] ?? 0) + 2 + (parts[1] ?? 0) : 2 + (parts[0] ?? 0)),
};

/** The size of a comprehension's result list: the range's count, with no path (elements resolve like `self`). */
function computedList(n: number): SizeNode {
  return { size: () => n, field: () => undefined, elem: () => undefined, key: () => undefined, fromPath: false };
}

function comprehension(name: string, receiver: Node, args: Node[], ctx: Ctx): Estimate | undefined {
  const range = walk(receiver, ctx);
  const n = sizeOf(range.size, ctx);
  const rangeKind = kindOf(receiver);
  const twoVar = args.length >= 3 && args[1]?.op === 'id' && name !== 'map' && name !== 'filter';
  const innerVars = new Map(ctx.vars);
  const inner: Ctx = { ...ctx, vars: innerVars };
  // cel-go gives iteration variables the range's path + "@items"; a range without a path (a computed list)
  // leaves ["@items"], which the API server's size estimator resolves from the root: like `self`
  const element = range.size?.fromPath ? range.size.elem() : ctx.vars.get('self');
  const key = range.size?.fromPath ? (range.size.key() ?? UNKNOWN) : ctx.vars.get('self');
  if (twoVar) {
    const perIteration = TWO_VAR_MACROS[name];
    if (!perIteration) return undefined;
    innerVars.set(args[0]?.args as string, rangeKind === 'list' ? fixedSize(0) : key);
    innerVars.set(args[1]?.args as string, element);
    const parts = args.slice(2).map((x) => walk(x, inner).cost);
    const step = perIteration(parts);
    const init = name.startsWith('transform') ? (name === 'transformList' ? 10 : 30) : 0;
    return { cost: range.cost + init + 1 + times(n, step), size: computedList(n) };
  }
  const perIteration = ONE_VAR_MACROS[name];
  if (!perIteration || args.length < 2) return undefined;
  innerVars.set(args[0]?.args as string, rangeKind === 'map' ? key : element);
  let step: number;
  if (name === 'map' && args.length === 3) step = walk(args[1], inner).cost + 13 + walk(args[2], inner).cost;
  else step = perIteration(walk(args[1], inner).cost);
  const init = name === 'map' || name === 'filter' ? 10 : 0;
  const result = name === 'exists_one' ? 2 : 1;
  return {
    cost: range.cost + init + result + times(n, step),
    size: name === 'map' || name === 'filter' ? computedList(n) : undefined,
  };
}

/** An int literal argument as cel-go's nodeAsUintValue reads it (a negative one is 0), or undefined. */
function constantInt(node: Node | undefined): number | undefined {
  // cel-go's parser folds `-1` into one literal; here it is a negation of one.
  if (node?.op === '-_' && isNode(node.args) && typeof node.args.args === 'bigint') return 0;
  if (node?.op !== 'value') return undefined;
  const v = node.args;
  return typeof v === 'bigint' ? (v < 0n ? 0 : Number(v)) : undefined;
}

/** ext/lists.go estimateAllocatingListCall: size x factor + 1 (the call) + 10 (the list). */
function allocatingList(costFactor: number, size: number, argCost: number, elem?: SizeNode): Estimate {
  return { cost: factor(size, costFactor) + 1 + 10 + argCost, size: fixedSize(size, elem) };
}

/** A library call with its operands walked: the receiver's and arguments' estimates and sizes. */
interface CallSite {
  name: string;
  /** `<namespace>.<name>` for the library namespaces (`strings.quote`), else the name. */
  fullName: string;
  receiver: Node | undefined;
  args: Node[];
  /** The receiver's estimate, unless it is a library namespace. */
  target: Estimate | undefined;
  parts: Estimate[];
  /** The receiver's and arguments' costs. */
  argCost: number;
  /** The sizes of the receiver and the first two arguments. */
  t: number;
  a0: number;
  a1: number;
  ctx: Ctx;
}

const fixed = (c: CallSite, n: number, size?: SizeNode): Estimate => ({ cost: n + c.argCost, size });

/** cel-go's cost of a binding comprehension (costBind): its empty range (a list literal) plus the bound value and the result. */
const BIND_RANGE_COST = 10;
const SORT_BY_INPUT = '@__sortBy_input__';

/**
 * `list.sortBy(e, key)` as cel-go expands it: a binding of the list and
 * `@__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(e, key))`, priced by estimateListSortBy on the
 * keys (n² comparisons x 2, plus 0.1 for string or bytes keys; dyn keys take every overload's maximum).
 */
function sortByCost(receiver: Node, args: Node[], ctx: Ctx): Estimate {
  const target = walk(receiver, ctx);
  const vars = new Map(ctx.vars).set(SORT_BY_INPUT, target.size);
  const input: Node = { op: 'id', args: SORT_BY_INPUT };
  const keys = comprehension('map', input, args, { ...ctx, vars }) ?? { cost: Infinity };
  const n = sizeOf(target.size, ctx);
  const keyType = (args[1] as Node).checkedType?.name ?? 'dyn';
  const f = ['string', 'bytes', 'dyn'].includes(keyType) ? 2 + STRING_FACTOR : 2;
  const sorted = allocatingList(f, n === Infinity ? Infinity : n * n, 1 + keys.cost);
  return { cost: BIND_RANGE_COST + target.cost + sorted.cost, size: computedList(n === Infinity ? Infinity : n * n) };
}

/**
 * optMap and optFlatMap as cel-go expands them: `t.hasValue() ? optional.of(<bind v = t.value() in body>) :
 * optional.none()` (optFlatMap without optional.of): the target twice, four calls and the binding. The bound
 * value has no path, so the body sees it at an unknown size.
 */
function optionalMacroCost(name: string, receiver: Node, args: Node[], ctx: Ctx): Estimate {
  const target = walk(receiver, ctx);
  const vars = new Map(ctx.vars).set(args[0]?.args as string, undefined);
  const body = walk(args[1], { ...ctx, vars });
  const bound = BIND_RANGE_COST + target.cost + 1 + body.cost + (name === 'optMap' ? 1 : 0);
  return { cost: target.cost + 1 + Math.max(bound, 1) };
}

/** The special forms among calls: comprehension macros, cel.bind, has(). */
function specialFormCost(name: string, receiver: Node | undefined, args: Node[], ctx: Ctx): Estimate | undefined {
  if (receiver && args[0]?.op === 'id' && args.length === 2) {
    if (name === 'sortBy') return sortByCost(receiver, args, ctx);
    if (name === 'optMap' || name === 'optFlatMap') return optionalMacroCost(name, receiver, args, ctx);
  }
  if (receiver && args[0]?.op === 'id' && (name in ONE_VAR_MACROS || name in TWO_VAR_MACROS)) {
    const c = comprehension(name, receiver, args, ctx);
    if (c) return c;
  }
  if (receiver?.op === 'id' && receiver.args === 'cel' && name === 'bind') {
    const [v, value, body] = args as [Node, Node, Node];
    const bound = walk(value, ctx);
    const innerVars = new Map(ctx.vars);
    const inner: Ctx = { ...ctx, vars: innerVars };
    innerVars.set(v.args as string, bound.size);
    const b = walk(body, inner);
    return { cost: bound.cost + b.cost, size: b.size };
  }
  if (name === 'has' && !receiver) {
    const inner = args[0];
    if (isNode(inner) && (inner.op === '.' || inner.op === '.?'))
      return { cost: walk((inner.args as [Node])[0], ctx).cost };
  }
  return undefined;
}

function callSite(name: string, receiver: Node | undefined, args: Node[], ctx: Ctx): CallSite {
  const isNamespace =
    receiver?.op === 'id' &&
    ['sets', 'strings', 'format', 'ip', 'lists'].includes(receiver.args as string) &&
    !ctx.vars.has(receiver.args as string);
  const target = receiver && !isNamespace ? walk(receiver, ctx) : undefined;
  const parts = args.map((x) => walk(x, ctx));
  return {
    name,
    fullName: isNamespace ? `${receiver?.args as string}.${name}` : name,
    receiver,
    args,
    target,
    parts,
    argCost: (target?.cost ?? 0) + sum(parts.map((x) => x.cost)),
    t: sizeOf(target?.size, ctx),
    a0: sizeOf(parts[0]?.size, ctx),
    a1: sizeOf(parts[1]?.size, ctx),
    ctx,
  };
}

/** Strings and regexes (the Kubernetes strings and regex libraries, cel-go ext strings). */
function stringCallCost(c: CallSite): Estimate | undefined {
  const { t, a0, a1 } = c;
  switch (c.fullName) {
    case 'startsWith':
    case 'endsWith':
      return fixed(c, factor(a0, STRING_FACTOR));
    case 'contains':
      return fixed(c, factor(t, STRING_FACTOR) * factor(a0, STRING_FACTOR));
    case 'matches':
    case 'k8s_matches':
      return c.receiver
        ? fixed(c, factor(t + 1, STRING_FACTOR) * factor(a0, REGEX_FACTOR))
        : fixed(c, factor(a0 + 1, STRING_FACTOR) * factor(a1, REGEX_FACTOR));
    case 'find':
    case 'findAll':
      return fixed(c, factor(t + 1, STRING_FACTOR) * factor(a0, REGEX_FACTOR), fixedSize(t));
    case 'k8s_format':
      return fixed(c, factor(t, STRING_FACTOR));
    case 'strings.quote':
      return fixed(c, factor(a0, STRING_FACTOR), fixedSize(a0 * 2 + 2));
    case 'k8s_lowerAscii':
    case 'k8s_upperAscii':
    case 'k8s_substring':
    case 'k8s_trim':
      return fixed(c, factor(t, STRING_FACTOR), c.target?.size);
    case 'k8s_replace':
    case 'k8s_split':
      return fixed(c, factor(t, 2 * STRING_FACTOR));
    case 'join': {
      const elemSize = c.target?.size?.fromPath ? sizeOf(c.target.size.elem(), c.ctx) : c.ctx.unknown;
      const total = t * elemSize + (c.parts[0] ? a0 * Math.max(0, t - 1) : 0);
      return fixed(c, factor(total, STRING_FACTOR), fixedSize(total));
    }
    default:
      return undefined;
  }
}

/** Lists: the Kubernetes lists library and cel-go ext.Lists v3 (ext/lists.go estimateAllocatingListCall). */
function listCallCost(c: CallSite): Estimate | undefined {
  const { name, t, args, receiver, target } = c;
  switch (c.fullName) {
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'k8s_indexOf':
    case 'k8s_lastIndexOf': {
      if (target && kindOf(receiver as Node) === 'list') {
        const elemKind = (receiver as Node).checkedType?.name ?? '';
        const elemSize = target.size?.fromPath ? sizeOf(target.size.elem(), c.ctx) : c.ctx.unknown;
        const elemCost = /list<(string|bytes)>/.test(elemKind) ? 1 + factor(elemSize, STRING_FACTOR) : 1;
        return fixed(c, t === Infinity ? Infinity : t * elemCost);
      }
      // the Kubernetes estimator prices indexOf/lastIndexOf on anything not a list as a string scan
      return fixed(c, factor(t, STRING_FACTOR));
    }
    case 'slice': {
      const start = constantInt(args[0]) ?? 0;
      const end = constantInt(args[1]) ?? t;
      // Unsigned in cel-go: an end below the start wraps around to a huge size.
      return allocatingList(1, end >= start ? end - start : Infinity, c.argCost, target?.size?.elem());
    }
    case 'lists.range': {
      const n = constantInt(args[0]);
      return allocatingList(1, n === undefined ? Infinity : n, c.argCost);
    }
    case 'reverse':
      return allocatingList(1, t, c.argCost, target?.size?.elem());
    case 'flatten':
      return allocatingList(args[0] ? (constantInt(args[0]) ?? Infinity) : 1, t, c.argCost);
    case 'distinct':
    case 'sort': {
      const strings = name === 'sort' && /list<(string|bytes)>/.test((receiver as Node).checkedType?.name ?? '');
      return allocatingList(strings ? 2 + STRING_FACTOR : 2, t === Infinity ? Infinity : t * t, c.argCost);
    }
    default:
      return undefined;
  }
}

/** The Kubernetes libraries of opaque types: IPs, CIDRs, quantities, semvers, URLs, formats, sets. */
function libraryTypeCallCost(c: CallSite): Estimate | undefined {
  const { a0, a1, args } = c;
  switch (c.fullName) {
    case 'url':
      return fixed(c, factor(a0, STRING_FACTOR), c.parts[0]?.size);
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
    case 'semver':
    case 'isSemver':
      return fixed(c, factor(a0, STRING_FACTOR));
    case 'ip':
      return c.receiver ? fixed(c, 1) : fixed(c, factor(a0, STRING_FACTOR));
    case 'ip.isCanonical':
      return fixed(c, factor(a0, 2 * STRING_FACTOR));
    case 'containsIP':
      return fixed(c, 4 + (kindOf(args[0] as Node) === 'string' ? factor(a0, STRING_FACTOR) : 0));
    case 'containsCIDR':
      return fixed(c, 4 + 2 + 1 + (kindOf(args[0] as Node) === 'string' ? factor(a0, STRING_FACTOR) : 0));
    case 'validate':
      return fixed(c, factor(factor(a0, STRING_FACTOR), MAX_NAME_FORMAT_REGEX_SIZE * REGEX_FACTOR));
    case 'sets.contains':
    case 'sets.equivalent':
    case 'sets.intersects':
      return fixed(
        c,
        a0 === Infinity || a1 === Infinity
          ? Infinity
          : Math.max(1, a0 * a1 * (c.fullName === 'sets.equivalent' ? 2 : 1)),
      );
    default:
      return undefined;
  }
}

/**
 * string() and bytes() (cel-go checker/cost.go BytesToString, StringToBytes: a scan of the argument). On a dyn
 * argument cel-go prices every candidate overload and takes the union: the scan, at least 1.
 */
function conversionCost(c: CallSite): Estimate | undefined {
  if (c.receiver || c.args.length !== 1) return undefined;
  const kind = kindOf(c.args[0] as Node);
  const converts = (c.name === 'string' && kind === 'bytes') || (c.name === 'bytes' && kind === 'string');
  if (!converts && kind !== 'dyn') return undefined;
  if (c.name !== 'string' && c.name !== 'bytes') return undefined;
  const scan = factor(c.a0, STRING_FACTOR);
  const size = fixedSize(c.name === 'bytes' && c.a0 !== Infinity ? c.a0 * 4 : c.a0);
  return { cost: (converts ? scan : Math.max(1, scan)) + c.argCost, size };
}

/** A function call: the call's own cost (1 unless priced above) plus its operands'. */
function call(name: string, receiver: Node | undefined, args: Node[], ctx: Ctx): Estimate {
  const special = specialFormCost(name, receiver, args, ctx);
  if (special) return special;
  const c = callSite(name, receiver, args, ctx);
  return stringCallCost(c) ?? listCallCost(c) ?? libraryTypeCallCost(c) ?? conversionCost(c) ?? fixed(c, 1);
}

/** The cost of one checked expression (its @marcbachmann/cel-js AST) given the sizes of its variables. */
export function expressionCost(
  ast: unknown,
  variables: ReadonlyMap<string, SizeNode | undefined>,
  options: { unknownSize?: number } = {},
): number {
  return walk(ast, { vars: variables, unknown: options.unknownSize ?? Infinity }).cost;
}
