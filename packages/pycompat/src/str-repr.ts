/**
 * Python `repr(str)`: single quotes unless the text has a single quote and no double quote, `\t`
 * `\n` `\r` and backslash escapes, and every code point `str.isprintable()` rejects (the Unicode
 * categories Other and Separator, space excepted) as `\xNN`, `\uNNNN` or `\UNNNNNNNN`. Logs, `str()`
 * of containers and rendered templates show strings this way.
 */

// Printable ASCII without quotes or backslash: the text goes between single quotes unchanged.
const PLAIN = /^[ !#-&(-[\]-~]*$/;
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function escapeCodePoint(cp: number): string {
  if (cp < 0x100) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp < 0x10000) return `\\u${cp.toString(16).padStart(4, '0')}`;
  return `\\U${cp.toString(16).padStart(8, '0')}`;
}

/** `repr()` of a str, given as a JS string or as its code points (lone surrogates kept apart). */
export function pyStrRepr(s: string | readonly number[]): string {
  if (typeof s === 'string' && PLAIN.test(s)) return `'${s}'`;
  const cps = typeof s === 'string' ? Array.from(s, (c) => c.codePointAt(0) ?? 0) : s;
  const quote = cps.includes(0x27) && !cps.includes(0x22) ? '"' : "'";
  let out = quote;
  for (const cp of cps) {
    const ch = String.fromCodePoint(cp);
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (cp === 0x09) out += '\\t';
    else if (cp === 0x0a) out += '\\n';
    else if (cp === 0x0d) out += '\\r';
    else if (cp !== 0x20 && ((cp >= 0xd800 && cp <= 0xdfff) || NON_PRINTABLE.test(ch)))
      out += escapeCodePoint(cp);
    else out += ch;
  }
  return out + quote;
}
