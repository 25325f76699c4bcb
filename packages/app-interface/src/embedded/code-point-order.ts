/**
 * Orders strings by Unicode code point, as Python's `sorted` does (the bundler
 * sorts keys that way). JS `<` compares UTF-16 code units, which differs only
 * when a surrogate pair meets a character in U+E000..U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const xSurrogate = x >= 0xd800 && x <= 0xdfff;
      const ySurrogate = y >= 0xd800 && y <= 0xdfff;
      if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1;
      return x - y;
    }
  }
  return a.length - b.length;
}

/** Keys of an object in code-point order. */
export function sortedKeys(obj: object): string[] {
  return Object.keys(obj).sort(compareCodePoints);
}
