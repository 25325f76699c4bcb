import { pyJsonDumps } from '@qontract/pycompat';

/*
 * qontract-bundler writes `json.dump(bundle, sort_keys=True, separators=(',', ':'))` with
 * Python's default `ensure_ascii=True`. Numbers still print the JS way (`1` where Python writes
 * `1.0`, `1e-7` for `1e-07`): the data was read into plain JS numbers, which no longer know
 * whether they were a YAML int or float, and bundles we write only need a stable sha of their own.
 */
const jsNumber = (n: number): string => String(n);

/** The bundler's JSON text: compact, keys sorted recursively, ASCII only, trailing newline. */
export function pythonJsonDumps(value: unknown): string {
  return `${pyJsonDumps(value, { sortKeys: true, separators: [',', ':'], number: jsNumber })}\n`;
}
