/**
 * Python `str()` / `repr()` of loaded values. The original base64-encodes `str(value)` for every
 * Secret `stringData` entry, so `True`, `None`, `1.0`, `[1, 'two']` and dates must be spelled the
 * way Python spells them.
 */
import { pyFloatRepr, pyIntRepr, pyStrRepr } from '@qontract/pycompat';
import {
  PyBytes,
  PyDate,
  PyDict,
  PyFloat,
  PySet,
  PyStr,
  type PyValue,
  pyOrderedDicts,
  pyTuples,
} from './py-values.ts';

function bytesRepr(b: Uint8Array): string {
  const hasSingle = b.includes(0x27);
  const hasDouble = b.includes(0x22);
  const quote = hasSingle && !hasDouble ? '"' : "'";
  let out = `b${quote}`;
  for (const c of b) {
    if (c === quote.charCodeAt(0) || c === 0x5c) out += `\\${String.fromCharCode(c)}`;
    else if (c === 0x09) out += '\\t';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c < 0x20 || c >= 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += String.fromCharCode(c);
  }
  return out + quote;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function tzText(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

function dateStr(d: PyDate): string {
  const date = `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`;
  if (!d.time) return date;
  const t = d.time;
  let out = `${date} ${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}`;
  if (t.microsecond) out += `.${pad(t.microsecond, 6)}`;
  if (t.tz) out += tzText(t.tz.offsetMinutes);
  return out;
}

function timedeltaRepr(minutes: number): string {
  let seconds = minutes * 60;
  let days = 0;
  if (seconds < 0) {
    days = -1;
    seconds += 86400;
  }
  const parts: string[] = [];
  if (days) parts.push(`days=${days}`);
  if (seconds) parts.push(`seconds=${seconds}`);
  return `datetime.timedelta(${parts.join(', ')})`;
}

function dateRepr(d: PyDate): string {
  if (!d.time) return `datetime.date(${d.year}, ${d.month}, ${d.day})`;
  const t = d.time;
  const fields = [d.year, d.month, d.day, t.hour, t.minute];
  if (t.second || t.microsecond) fields.push(t.second);
  if (t.microsecond) fields.push(t.microsecond);
  let out = `datetime.datetime(${fields.join(', ')}`;
  if (t.tz) {
    out +=
      t.tz.offsetMinutes === 0
        ? ', tzinfo=datetime.timezone.utc'
        : `, tzinfo=datetime.timezone(${timedeltaRepr(t.tz.offsetMinutes)})`;
  }
  return `${out})`;
}

function repr(v: PyValue, active: Set<object>): string {
  if (typeof v === 'string') return pyStrRepr(v);
  if (v instanceof PyStr) return pyStrRepr(v.codePoints);
  if (v instanceof PyDate) return dateRepr(v);
  return str(v, active);
}

function str(v: PyValue, active: Set<object>): string {
  if (typeof v === 'string') return v;
  if (v instanceof PyStr) return v.js;
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'bigint') return pyIntRepr(v);
  if (typeof v === 'number') return Number.isInteger(v) ? pyIntRepr(v) : pyFloatRepr(v, 'python');
  if (v instanceof PyFloat) return pyFloatRepr(v.value, 'python');
  if (v instanceof PyBytes) return bytesRepr(v.bytes);
  if (v instanceof PyDate) return dateStr(v);
  if (active.has(v)) {
    return Array.isArray(v) ? (pyTuples.has(v) ? '(...)' : '[...]') : '{...}';
  }
  active.add(v);
  try {
    if (Array.isArray(v)) {
      const items = v.map((x) => repr(x, active));
      if (pyTuples.has(v)) return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
      return `[${items.join(', ')}]`;
    }
    if (v instanceof PySet)
      return v.items.length ? `{${v.items.map((x) => repr(x, active)).join(', ')}}` : 'set()';
    const entries = v instanceof PyDict ? v.entries : Object.entries(v);
    const text = `{${entries.map(([k, x]) => `${repr(k, active)}: ${repr(x, active)}`).join(', ')}}`;
    // Python 3.12+ (the original runs 3.14): `OrderedDict({'a': 1})`, and `OrderedDict()` when empty.
    if (pyOrderedDicts.has(v)) return entries.length ? `OrderedDict(${text})` : 'OrderedDict()';
    return text;
  } finally {
    active.delete(v);
  }
}

/** Python `str(value)`. */
export function pyStr(value: PyValue): string {
  return str(value, new Set());
}

/** A PyStr always carries lone surrogates; a JS string may too. Python's UTF-8 encoder rejects both. */
export function pyUtf8Base64(text: string | PyStr): string {
  const s = typeof text === 'string' ? text : text.js;
  if (text instanceof PyStr || !s.isWellFormed()) {
    throw new Error("'utf-8' codec can't encode character: surrogates not allowed");
  }
  return Buffer.from(s, 'utf8').toString('base64');
}
