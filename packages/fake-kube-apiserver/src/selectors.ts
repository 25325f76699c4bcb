import { badRequest } from './status.ts';

type Requirement =
  | { readonly op: 'eq' | 'neq'; readonly key: string; readonly value: string }
  | { readonly op: 'in' | 'notin'; readonly key: string; readonly values: readonly string[] }
  | { readonly op: 'exists' | 'notexists'; readonly key: string };

export type LabelSelector = (labels: Readonly<Record<string, string>>) => boolean;

/** Splits on commas that are not inside a `( ... )` value set. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

function parseRequirement(text: string): Requirement {
  const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(text);
  if (set) {
    const values = (set[3] ?? '')
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    return { op: set[2] === 'in' ? 'in' : 'notin', key: set[1] ?? '', values };
  }
  const cmp = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(text);
  if (cmp) {
    return { op: cmp[2] === '!=' ? 'neq' : 'eq', key: cmp[1] ?? '', value: cmp[3] ?? '' };
  }
  if (/^![^\s=!()]+$/.test(text)) return { op: 'notexists', key: text.slice(1) };
  if (/^[^\s=!()]+$/.test(text)) return { op: 'exists', key: text };
  throw badRequest(`unable to parse requirement: ${text}`);
}

/** `labelSelector` query syntax: `a=b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`. */
export function parseLabelSelector(text: string | null): LabelSelector | undefined {
  if (text === null || text.trim() === '') return undefined;
  const requirements = splitTopLevel(text).map(parseRequirement);
  return (labels) =>
    requirements.every((r) => {
      const has = Object.hasOwn(labels, r.key);
      const value = labels[r.key];
      switch (r.op) {
        case 'eq':
          return has && value === r.value;
        case 'neq':
          return !has || value !== r.value;
        case 'in':
          return has && r.values.includes(value ?? '');
        case 'notin':
          return !has || !r.values.includes(value ?? '');
        case 'exists':
          return has;
        case 'notexists':
          return !has;
      }
      return false;
    });
}

export interface FieldSelector {
  readonly name?: { readonly value: string; readonly negate: boolean };
  readonly namespace?: { readonly value: string; readonly negate: boolean };
}

/** Only `metadata.name` and `metadata.namespace` are supported, as for most real types. */
export function parseFieldSelector(text: string | null): FieldSelector | undefined {
  if (text === null || text.trim() === '') return undefined;
  const out: { name?: FieldSelector['name']; namespace?: FieldSelector['namespace'] } = {};
  for (const part of splitTopLevel(text)) {
    const m = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const term = { value: m[3] ?? '', negate: m[2] === '!=' };
    if (m[1] === 'metadata.name') out.name = term;
    else if (m[1] === 'metadata.namespace') out.namespace = term;
    else throw badRequest(`field label not supported: ${m[1]}`);
  }
  return out;
}

export function matchesFieldSelector(
  selector: FieldSelector,
  namespace: string,
  name: string,
): boolean {
  const check = (term: FieldSelector['name'], actual: string) =>
    term === undefined || (term.value === actual) !== term.negate;
  return check(selector.name, name) && check(selector.namespace, namespace);
}
