/**
 * Python `str` ordering: by code point. JavaScript's `<` and the default `sort` compare UTF-16
 * code units, which disagree with code-point order only where a surrogate pair (a character above
 * U+FFFF) meets a character in U+E000..U+FFFF. Keys sorted for `json.dumps(sort_keys=True)`, the
 * bundle and the template helpers must follow Python's order, or hashes and bytes drift.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) continue;
    // Equal so far; a high surrogate just before may pair with the unit here in one string only.
    if (i > 0 && isHigh(a.charCodeAt(i - 1))) {
      const aPaired = isLow(ca);
      const bPaired = isLow(cb);
      // An astral character is above the lone high surrogate the other string holds there.
      if (aPaired !== bPaired) return aPaired ? 1 : -1;
      if (aPaired) return ca - cb;
    }
    return codePointFrom(a, i) - codePointFrom(b, i);
  }
  return a.length - b.length;
}

function isHigh(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLow(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** The code point starting at unit `i`: a surrogate pair's, else the unit (a lone surrogate too). */
function codePointFrom(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (isHigh(c)) {
    const next = s.charCodeAt(i + 1);
    if (isLow(next)) return 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
  }
  return c;
}
