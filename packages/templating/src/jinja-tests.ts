import type { TestFn } from './context.ts';
import { failure } from './errors.ts';
import { binaryOp } from './evaluator.ts';
import {
  isDict,
  isFloat,
  isInt,
  isNumber,
  pyCompare,
  pyContains,
  pyEquals,
  pyStr,
  TemplateCallable,
  Undefined,
} from './values.ts';

function one(name: string, args: unknown[]): unknown {
  if (args.length !== 1)
    throw failure.type(`${name}() takes exactly one argument (${args.length} given)`);
  return args[0];
}

const eq: TestFn = (_c, v, a) => pyEquals(v, one('eq', a));
const ne: TestFn = (_c, v, a) => !pyEquals(v, one('ne', a));
const lt: TestFn = (_c, v, a) => pyCompare(v, one('lt', a), '<') < 0;
const le: TestFn = (_c, v, a) => pyCompare(v, one('le', a), '<=') <= 0;
const gt: TestFn = (_c, v, a) => pyCompare(v, one('gt', a), '>') > 0;
const ge: TestFn = (_c, v, a) => pyCompare(v, one('ge', a), '>=') >= 0;

/** Jinja2's built-in tests (`is defined`, `is none`, `is string`, ...). */
export const STANDARD_TESTS: Record<string, TestFn> = Object.assign(
  Object.create(null) as Record<string, TestFn>,
  {
    defined: (_c, v) => !(v instanceof Undefined),
    undefined: (_c, v) => v instanceof Undefined,
    none: (_c, v) => v === null,
    boolean: (_c, v) => typeof v === 'boolean',
    true: (_c, v) => v === true,
    false: (_c, v) => v === false,
    integer: (_c, v) => isInt(v),
    float: (_c, v) => isFloat(v),
    number: (_c, v) => isNumber(v) || typeof v === 'boolean',
    string: (_c, v) => typeof v === 'string',
    mapping: (_c, v) => isDict(v),
    iterable: (_c, v) => typeof v === 'string' || Array.isArray(v) || isDict(v),
    sequence: (_c, v) => typeof v === 'string' || Array.isArray(v) || isDict(v),
    callable: (_c, v) => v instanceof TemplateCallable,
    sameas: (_c, v, a) => {
      const other = one('sameas', a);
      return v === other || (v === null && other === null);
    },
    escaped: () => false,
    in: (_c, v, a) => pyContains(one('in', a), v),
    // Jinja2 computes `value % n` (so a string is %-formatted) and compares with ==.
    odd: (c, v) => pyEquals(binaryOp('%', v, 2, c.budget), 1),
    even: (c, v) => pyEquals(binaryOp('%', v, 2, c.budget), 0),
    divisibleby: (c, v, a) => pyEquals(binaryOp('%', v, one('divisibleby', a), c.budget), 0),
    // Jinja2 tests `str(value)`, so `{'a': 1} is lower` is true.
    lower: (_c, v) => {
      const s = pyStr(v);
      return /\p{Ll}/u.test(s) && s === s.toLowerCase();
    },
    upper: (_c, v) => {
      const s = pyStr(v);
      return /\p{Lu}/u.test(s) && s === s.toUpperCase();
    },
    filter: (c, v) => typeof v === 'string' && c.hasFilter(v),
    test: (c, v) => typeof v === 'string' && c.hasTest(v),
    eq,
    equalto: eq,
    '==': eq,
    ne,
    '!=': ne,
    lt,
    lessthan: lt,
    '<': lt,
    le,
    '<=': le,
    gt,
    greaterthan: gt,
    '>': gt,
    ge,
    '>=': ge,
  } satisfies Record<string, TestFn>,
);
