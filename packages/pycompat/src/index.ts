export { compareCodePoints } from './code-point-order.ts';
export { type PyJsonModel, pyJsonDumps, pyJsonString } from './json-dumps.ts';
export { PY_INT_MAX_STR_DIGITS, pyFloatRepr, pyIntRepr, pyNumberRepr } from './py-numbers.ts';
export { pyStrRepr } from './str-repr.ts';
export { type BlockBuilders, readBlockSubset } from './yaml-block-subset.ts';
