/**
 * One copy of each short string value the engine keeps many times over: the
 * same kind, apiVersion, label value, annotation value, manager name or
 * timestamp in tens of thousands of objects. `JSON.parse` and slices of a
 * document make a new string for every occurrence (V8 shares property names,
 * not values); 50,000 objects carry about 1.5 million of them, most repeated.
 *
 * Bounded: only strings up to `MAX_LENGTH` code units are kept, and the table
 * starts over once it holds `MAX_ENTRIES` (unique names would otherwise fill
 * it for the life of a looping process). Interning never changes a value:
 * equal strings are interchangeable in JS.
 */
// Below a sha256 in hex (64): digests and uids are unique, looking them up is wasted work.
const MAX_LENGTH = 48;
const MAX_ENTRIES = 100_000;

let table = new Map<string, string>();

/** The kept copy of `value` (or `value` itself, now kept). */
export function intern(value: string): string {
  if (value.length > MAX_LENGTH) return value;
  const known = table.get(value);
  if (known !== undefined) return known;
  if (table.size >= MAX_ENTRIES) table = new Map();
  table.set(value, value);
  return value;
}

/**
 * `intern` for a piece cut out of a larger text that stays alive (a document
 * and its scalars): V8 copies a slice shorter than 13 code units into a string
 * of its own, which repeated values multiply; a longer slice only points into
 * the text, and looking it up would cost more than it saves.
 */
export function internSlice(value: string): string {
  return value.length < 13 ? intern(value) : value;
}

/** Interns the string values of a flat record in place (labels, annotations). */
export function internValues(record: Record<string, unknown>): void {
  for (const key in record) {
    const value = record[key];
    if (typeof value === 'string') record[key] = intern(value);
  }
}
