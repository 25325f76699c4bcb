/**
 * CPU quantities as the original compares them (upstream
 * `reconcile/utils/openshift_resource.py` `cpu_equal()`).
 */
import { pyFloatParse } from './py-numbers.ts';
import { PyFloat, PyStr, type PyValue, pyEquals } from './py-values.ts';

/** `f"{int(float(v) * 1000)}m"` when Python can compute it, else the value itself. */
function normalizeCpu(value: PyValue | undefined): PyValue | undefined {
  let f: number | undefined;
  if (typeof value === 'string') f = pyFloatParse(value);
  else if (value instanceof PyStr) f = undefined;
  else if (typeof value === 'boolean') f = value ? 1 : 0;
  else if (typeof value === 'number') f = value;
  else if (typeof value === 'bigint') f = Number(value);
  else if (value instanceof PyFloat) f = value.value;
  if (f === undefined) return value;
  const milli = f * 1000;
  if (!Number.isFinite(milli)) return value;
  return `${BigInt(Math.trunc(milli))}m`;
}

/** The original's `cpu_equal`: `"1"` = `"1000m"` = `1`; truncation, so `"1.001"` != `"1001m"`. */
export function cpuEqual(a: PyValue | undefined, b: PyValue | undefined): boolean {
  const na = normalizeCpu(a);
  const nb = normalizeCpu(b);
  if (na === undefined || nb === undefined) return na === nb;
  return pyEquals(na, nb);
}
