import { JSONPath } from 'jsonpath-plus';
import { failure } from './errors.ts';
import { evaluateJsonpathFilter } from './jsonpath-filter.ts';
import { toPlain } from './values.ts';

// One function for every query: jsonpath-plus caches compiled filters under the function's text.
const safeFilterEval = (script: string, context: object): boolean =>
  evaluateJsonpathFilter(script, context as Record<string, unknown>);

interface Match {
  value: unknown;
  components: (string | number)[];
}

/**
 * JSONPath queries for the `extract_jsonpath`, `matches_jsonpath` and
 * `json_pointers` filters. jsonpath-plus's script engines are replaced by
 * `evaluateJsonpathFilter`, which understands filter expressions
 * (`[?(@.name == 'x')]`) but can run no code.
 */
function find(input: unknown, path: unknown): Match[] {
  if (typeof path !== 'string' || path.length === 0)
    throw failure.runtime('AssertionError: a JSONPath is required');
  const json = toPlain(input) as null | boolean | number | string | object;
  let results: { path: string; value: unknown }[];
  try {
    results = JSONPath({
      path,
      json,
      eval: safeFilterEval,
      wrap: true,
      resultType: 'all',
    }) as {
      path: string;
      value: unknown;
    }[];
  } catch (e) {
    throw failure.runtime(
      `invalid JSONPath ${JSON.stringify(path)}: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  return results.map((r) => {
    const parts = JSONPath.toPathArray(r.path).slice(1);
    const components: (string | number)[] = [];
    let node: unknown = json;
    for (const part of parts) {
      if (Array.isArray(node)) {
        components.push(Number(part));
        node = node[Number(part)];
      } else {
        components.push(part);
        node =
          node !== null && typeof node === 'object'
            ? (node as Record<string, unknown>)[part]
            : undefined;
      }
    }
    return { value: r.value, components };
  });
}

export function extractJsonpath(input: unknown, path: unknown): unknown[] {
  return find(input, path).map((m) => m.value);
}

export function matchesJsonpath(input: unknown, path: unknown): boolean {
  return find(input, path).length > 0;
}

const JSONPATH_LITERALS = ['*', '.', '[', ']', '(', ')', '$', ',', ':', '|', '&', '~'];

/**
 * RFC 6901-style pointers of the matches, spelled exactly as the original
 * derives them from its JSONPath library's path string: `a.[2].b` → `/a/2/b`.
 * Kept quirks: only single-digit indices lose their brackets (`/a/[12]`),
 * field names are not `~`-escaped, and a root match gives `/$`.
 */
export function jsonPointers(input: unknown, path: unknown): string[] {
  return find(input, path).map((m) => {
    if (m.components.length === 0) return '/$';
    const text = m.components
      .map((c) =>
        typeof c === 'number'
          ? `[${c}]`
          : JSONPATH_LITERALS.some((l) => c.includes(l))
            ? `'${c}'`
            : c,
      )
      .join('.');
    const elems = text.split('.').map((e) => (/^\[\d\]/.test(e) ? e.slice(1, -1) : e));
    return `/${elems.join('/')}`;
  });
}
