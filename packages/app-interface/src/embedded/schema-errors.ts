import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { JsonObject } from './types.ts';

/*
 * ajv with `allErrors` reports every failing branch of a failed `oneOf` (a
 * namespace's `openshiftResources` entry has five: one error per provider it
 * is not) and then the `oneOf` itself. qontract-validator says one thing per
 * file. Here a failed `oneOf`/`anyOf` is replaced by the errors of the branch
 * the data meant: the one its discriminator (`provider`, `service`, ...)
 * selects, or else the branch that got deepest into the data.
 */

/** One schema violation: where (a JSON pointer), what, and which alternatives led there. */
interface Explained {
  readonly path: string;
  readonly detail: string;
  /** An enum/const mismatch: what a discriminator field produces in the branches it does not select. */
  readonly discriminates: boolean;
  /** The alternatives chosen on the way, outermost first (`provider: "route"`). */
  readonly via: readonly string[];
}

/** How a list of ajv errors reads for a user: most specific first, one line each. */
interface ErrorExplainer {
  explain(errors: readonly ErrorObject[]): string[];
}

type Located = { key: string; pointer: string };

/** Walks every object of the bundle's schemas once, so an error's schema object can be located. */
function indexSchemaObjects(schemas: Record<string, JsonObject>): WeakMap<object, Located> {
  const index = new WeakMap<object, Located>();
  const walk = (key: string, value: unknown, pointer: string) => {
    if (typeof value !== 'object' || value === null || index.has(value)) return;
    index.set(value, { key, pointer });
    for (const [k, v] of Object.entries(value)) {
      walk(key, v, `${pointer}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`);
    }
  };
  for (const [key, schema] of Object.entries(schemas)) walk(key, schema, '');
  return index;
}

const COMPOSITE: ReadonlySet<string> = new Set(['oneOf', 'anyOf']);

function isFailedComposite(e: ErrorObject): boolean {
  if (!COMPOSITE.has(e.keyword)) return false;
  // A oneOf that matched several branches is a problem of its own, not of one branch.
  return !(e.keyword === 'oneOf' && Array.isArray(e.params.passingSchemas));
}

function depth(pointer: string): number {
  return pointer === '' ? 0 : pointer.split('/').length - 1;
}

export function formatErrorDetail(e: ErrorObject): string {
  if (e.keyword === 'additionalProperties') {
    return `has unexpected property '${String(e.params.additionalProperty)}'`;
  }
  if (e.keyword === 'enum') return `must be one of ${JSON.stringify(e.params.allowedValues)}`;
  if (e.keyword === 'required') {
    return `is missing required property '${String(e.params.missingProperty)}'`;
  }
  if (e.keyword === 'oneOf' && Array.isArray(e.params.passingSchemas)) {
    return `matches more than one alternative (${(e.params.passingSchemas as number[]).join(', ')}) of its oneOf`;
  }
  return e.message ?? 'is invalid';
}

/**
 * The property that tells the branches apart: the child the most branches
 * reject with an `enum`/`const` error while at least one accepts it.
 */
function discriminator(
  branches: readonly Explained[][],
  data: unknown,
): { name: string; value: unknown } | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  const rejecting = new Map<string, number>();
  for (const errors of branches) {
    const names = new Set(
      errors
        .filter((e) => e.discriminates && depth(e.path) === 1)
        .map((e) => e.path.slice(1).replaceAll('~1', '/').replaceAll('~0', '~')),
    );
    for (const n of names) rejecting.set(n, (rejecting.get(n) ?? 0) + 1);
  }
  let best: string | null = null;
  for (const [name, count] of rejecting) {
    if (count === branches.length) continue;
    if (best === null || count > rejecting.get(best)!) best = name;
  }
  return best === null ? null : { name: best, value: (data as Record<string, unknown>)[best] };
}

export function errorExplainer(ajv: Ajv, schemas: Record<string, JsonObject>): ErrorExplainer {
  const index = indexSchemaObjects(schemas);
  const branchValidators = new Map<string, ValidateFunction | null>();

  const branchValidator = (at: Located, keyword: string, i: number): ValidateFunction | null => {
    const pointer = `${at.pointer}/${keyword}/${i}`;
    const ref = `${at.key}#${pointer.split('/').map(encodeURIComponent).join('/')}`;
    if (!branchValidators.has(ref)) {
      let fn: ValidateFunction | null = null;
      try {
        fn = ajv.compile({ $ref: ref });
      } catch {
        // Left unexplained: the composite error is reported as ajv states it.
      }
      branchValidators.set(ref, fn);
    }
    return branchValidators.get(ref)!;
  };

  /** The errors a user should see, with paths relative to where `errors` were produced. */
  const reduce = (errors: readonly ErrorObject[]): Explained[] => {
    const out: Explained[] = [];
    // ajv appends a composite's branch errors right before the composite's own
    // error; walking backwards meets an outer composite before its inner ones.
    let i = errors.length - 1;
    while (i >= 0) {
      const e = errors[i]!;
      const replaced = isFailedComposite(e)
        ? explainComposite(errors, i)
        : e.keyword === 'contains'
          ? explainContains(errors, i)
          : null;
      if (replaced === null) {
        out.push({
          path: e.instancePath,
          detail: formatErrorDetail(e),
          discriminates: e.keyword === 'enum' || e.keyword === 'const',
          via: [],
        });
        i -= 1;
        continue;
      }
      // `out` is built backwards and reversed at the end: keep the branch's order.
      out.push(...replaced.errors.toReversed());
      i -= 1 + replaced.consumed;
    }
    return out.reverse();
  };

  /** A failed `contains` says what was missing, not why each item is not it. */
  const explainContains = (
    errors: readonly ErrorObject[],
    at: number,
  ): { errors: Explained[]; consumed: number } => {
    const e = errors[at]!;
    let start = at;
    while (
      start > 0 &&
      errors[start - 1]!.schemaPath.startsWith(`${e.schemaPath}/`) &&
      errors[start - 1]!.instancePath.startsWith(`${e.instancePath}/`)
    ) {
      start -= 1;
    }
    const wanted = e.schema as { const?: unknown } | undefined;
    const detail =
      wanted && typeof wanted === 'object' && 'const' in wanted
        ? `must contain ${JSON.stringify(wanted.const)}`
        : formatErrorDetail(e);
    return {
      errors: [{ path: e.instancePath, detail, discriminates: false, via: [] }],
      consumed: at - start,
    };
  };

  const explainComposite = (
    errors: readonly ErrorObject[],
    at: number,
  ): { errors: Explained[]; consumed: number } | null => {
    const e = errors[at]!;
    const where = typeof e.parentSchema === 'object' ? index.get(e.parentSchema) : undefined;
    const branches = Array.isArray(e.schema) ? e.schema : null;
    if (!where || !branches) return null;
    const perBranch: Explained[][] = [];
    let consumed = 0;
    for (let b = 0; b < branches.length; b++) {
      const validate = branchValidator(where, e.keyword, b);
      if (!validate) return null;
      if (validate(e.data)) {
        perBranch.push([]);
        continue;
      }
      const raw = validate.errors ?? [];
      consumed += raw.length;
      perBranch.push(reduce(raw));
    }
    // The inline run produced the same errors right before this one; if not, leave it unexplained.
    const inline = errors.slice(at - consumed, at);
    if (consumed > at || inline.some((x) => !x.instancePath.startsWith(e.instancePath)))
      return null;
    const chosen = chooseBranch(perBranch, e.data);
    if (chosen === null) return null;
    const note =
      chosen.by === null
        ? `closest of ${branches.length} alternatives`
        : `${chosen.by.name}: ${JSON.stringify(chosen.by.value)}`;
    const explained = perBranch[chosen.index]!.map((b) => ({
      path: `${e.instancePath}${b.path}`,
      detail: b.detail,
      discriminates: false,
      via: [note, ...b.via],
    }));
    return { errors: explained, consumed };
  };

  return {
    explain(errors) {
      const lines = reduce(errors)
        .map((e, order) => ({ ...e, order }))
        // Most specific first: the deepest place in the data, then ajv's order.
        .sort((a, b) => depth(b.path) - depth(a.path) || a.order - b.order)
        .map((e) => {
          const via = e.via.length > 0 ? ` (${e.via.join(', ')})` : '';
          return `${e.path || '(root)'} ${e.detail}${via}`;
        });
      return [...new Set(lines)];
    },
  };
}

function chooseBranch(
  perBranch: readonly Explained[][],
  data: unknown,
): { index: number; by: { name: string; value: unknown } | null } | null {
  const failing = perBranch
    .map((errors, index) => ({ errors, index }))
    .filter((b) => b.errors.length > 0);
  if (failing.length === 0) return null;
  const by = discriminator(perBranch, data);
  if (by !== null) {
    const selected = failing.filter(
      (b) => !b.errors.some((e) => e.discriminates && e.path === `/${escapePointer(by.name)}`),
    );
    if (selected.length === 1) return { index: selected[0]!.index, by };
  }
  const deepest = (errors: readonly Explained[]) => Math.max(...errors.map((e) => depth(e.path)));
  const closest = failing.reduce((best, b) =>
    deepest(b.errors) > deepest(best.errors) ||
    (deepest(b.errors) === deepest(best.errors) && b.errors.length < best.errors.length)
      ? b
      : best,
  );
  return { index: closest.index, by: null };
}

function escapePointer(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}
