import { Buffer } from 'node:buffer';
import { failure } from './errors.ts';

const ALWAYS_SAFE = /[A-Za-z0-9_.\-~]/;

function checkEncoding(encoding: unknown): void {
  if (encoding === null || encoding === undefined) return;
  const e = String(encoding).toLowerCase().replace(/[-_]/g, '');
  if (e !== 'utf8') throw failure.runtime(`LookupError: unsupported encoding: ${String(encoding)}`);
}

/**
 * Python's `urllib.parse.quote(s, safe, encoding)` (and `quote_plus` with
 * `plus`): UTF-8 bytes outside `[A-Za-z0-9_.-~]` and `safe` become `%XX`.
 * Hand-written because `encodeURIComponent` keeps `!'()*` and knows no `safe`.
 */
export function urlQuote(s: string, safe: string, plus = false, encoding?: unknown): string {
  checkEncoding(encoding);
  let out = '';
  for (const ch of s) {
    if (ALWAYS_SAFE.test(ch) || (safe.includes(ch) && ch.codePointAt(0)! < 128)) out += ch;
    else if (plus && ch === ' ') out += '+';
    else {
      for (const byte of Buffer.from(ch, 'utf8'))
        out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return out;
}

/** Python's `urllib.parse.unquote(s)`: `%XX` runs decoded as UTF-8, invalid bytes replaced. */
export function urlUnquote(s: string, encoding?: unknown): string {
  checkEncoding(encoding);
  return s.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    const bytes = Buffer.from(run.replace(/%/g, ''), 'hex');
    return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  });
}
