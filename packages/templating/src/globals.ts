import type { Budget } from './context.ts';
import { failure, RenderFailure } from './errors.ts';
import { intAdd, intDivMod, intNeg, intSub, type PyInt } from './python-int.ts';

const MAX_RANGE = 100_000;

import {
  BuiltinFunction,
  dictEntries,
  dictSet,
  intValue,
  isDict,
  isInt,
  Namespace,
  newDict,
  typeName,
} from './values.ts';

/** Jinja2's global functions that templates use: `range`, `dict`, `namespace`. */
export function globalFunctions(budget: Budget): Record<string, BuiltinFunction> {
  const range = new BuiltinFunction('range', (args, kwargs) => {
    if (Object.keys(kwargs).length) throw failure.type('range() takes no keyword arguments');
    if (args.length < 1 || args.length > 3)
      throw failure.type(`range expected 1 to 3 arguments, got ${args.length}`);
    for (const a of args)
      if (!isInt(a) && typeof a !== 'boolean')
        throw failure.type(`'${typeName(a)}' object cannot be interpreted as an integer`);
    const n = args.map((a) => intValue(a as PyInt | boolean));
    const [start, stop, step] = n.length === 1 ? [0, n[0]!, 1] : [n[0]!, n[1]!, n[2] ?? 1];
    if (step === 0) throw failure.value('range() arg 3 must not be zero');
    // ceil((stop - start) / step), exact for ints of any size.
    const exactLength = intNeg(intDivMod(intSub(start, stop), step)[0]);
    // Jinja2's sandbox refuses ranges longer than its MAX_RANGE, so templates never relied on more.
    if (exactLength > MAX_RANGE) {
      throw new RenderFailure(
        'OverflowError',
        `Range too big. The sandbox blocks ranges larger than MAX_RANGE (${MAX_RANGE}).`,
      );
    }
    const length = Math.max(0, Number(exactLength));
    budget.checkLength(length, 'range');
    const items: PyInt[] = [];
    for (let i = 0, v = start; i < length; i++, v = intAdd(v, step)) items.push(v);
    return items;
  });
  const dict = new BuiltinFunction('dict', (args, kwargs) => {
    const out = newDict();
    if (args.length > 1) throw failure.type(`dict expected at most 1 argument, got ${args.length}`);
    if (args.length === 1) {
      const src = args[0];
      if (!isDict(src))
        throw failure.type(`dict() argument must be a mapping, not ${typeName(src)}`);
      for (const [k, v] of dictEntries(src)) dictSet(out, k, v);
    }
    for (const [k, v] of Object.entries(kwargs)) dictSet(out, k, v);
    return out;
  });
  const namespace = new BuiltinFunction('namespace', (args, kwargs) => {
    const ns = new Namespace();
    for (const a of args) {
      if (!isDict(a))
        throw failure.type(`namespace() argument must be a mapping, not ${typeName(a)}`);
      for (const [k, v] of dictEntries(a)) dictSet(ns.attrs, k, v);
    }
    for (const [k, v] of Object.entries(kwargs)) dictSet(ns.attrs, k, v);
    return ns;
  });
  return { range, dict, namespace };
}
