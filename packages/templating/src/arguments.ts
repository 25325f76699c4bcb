import { failure } from './errors.ts';

/** One parameter of a built-in: its name and, when optional, its default. */
export type Param = string | [name: string, defaultValue: unknown];

/**
 * Binds positional and keyword arguments to a built-in's parameters the way
 * Python does, with Python's error messages.
 */
export function bindArgs(
  fnName: string,
  params: readonly Param[],
  args: readonly unknown[],
  kwargs: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const names = params.map((p) => (typeof p === 'string' ? p : p[0]));
  if (args.length > params.length) {
    throw failure.type(
      `${fnName}() takes at most ${params.length} arguments (${args.length} given)`,
    );
  }
  const bound: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  args.forEach((a, i) => {
    bound[names[i]!] = a;
  });
  for (const [key, value] of Object.entries(kwargs)) {
    if (!names.includes(key)) {
      throw failure.type(`${fnName}() got an unexpected keyword argument '${key}'`);
    }
    if (key in bound) throw failure.type(`${fnName}() got multiple values for argument '${key}'`);
    bound[key] = value;
  }
  for (const p of params) {
    if (typeof p === 'string') {
      if (!(p in bound)) throw failure.type(`${fnName}() missing required argument: '${p}'`);
    } else if (!(p[0] in bound)) bound[p[0]] = p[1];
  }
  return bound;
}
