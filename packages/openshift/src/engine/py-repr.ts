import { pyFloatRepr, pyStrRepr } from '@qontract/pycompat';

/**
 * Python `repr` of the action lists the original logs, e.g.
 * `['apply', 'privileged=False', 'cl', 'ns', 'ConfigMap', 'name']`. SREs read
 * and grep these lines, so the shape is kept.
 */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number')
    return Number.isInteger(value) ? String(value) : pyFloatRepr(value, 'python');
  if (typeof value === 'string') return pyStrRepr(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (value instanceof Set)
    return value.size === 0 ? 'set()' : `{${[...value].map(pyRepr).join(', ')}}`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${pyStrRepr(k)}: ${pyRepr(v)}`)
      .join(', ')}}`;
  }
  return String(value);
}
