/**
 * Python's rounding of floats to decimal digits (`round(x, n)`, `'%.nf' % x`):
 * decided on the exact binary value, ties to even. JavaScript's `toFixed`
 * breaks ties upwards (`(2.25).toFixed(1)` is `2.3`, Python prints `2.2`).
 */
export function pyToFixed(x: number, digits: number): string {
  const d = Math.max(0, Math.min(100, Math.trunc(digits)));
  const negative = x < 0 || Object.is(x, -0);
  const abs = Math.abs(x);
  if (abs >= 1e21) {
    const whole = BigInt(abs).toString();
    return `${negative ? '-' : ''}${whole}${d ? `.${'0'.repeat(d)}` : ''}`;
  }
  // toFixed(100) spells out the exact binary value for every magnitude a tie can have.
  const exact = abs.toFixed(100);
  const dot = exact.indexOf('.');
  const kept = exact.slice(0, dot + 1 + d).replace(/\.$/, '');
  const tail = exact.slice(dot + 1 + d);
  const first = tail[0] ?? '0';
  const rest = tail.slice(1);
  const lastDigit = Number(kept[kept.length - 1]);
  const roundUp = first > '5' || (first === '5' && (/[1-9]/.test(rest) || lastDigit % 2 === 1));
  const text = roundUp ? incrementDecimal(kept) : kept;
  return `${negative ? '-' : ''}${text}`;
}

function incrementDecimal(s: string): string {
  const chars = s.split('');
  for (let i = chars.length - 1; i >= 0; i--) {
    if (chars[i] === '.') continue;
    if (chars[i] === '9') chars[i] = '0';
    else {
      chars[i] = String(Number(chars[i]) + 1);
      return chars.join('');
    }
  }
  return `1${chars.join('')}`;
}

/** Python's `round(x, digits)` for a float (negative `digits` rounds to tens, hundreds, ...). */
export function pyRound(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  if (digits >= 0) return Number(pyToFixed(x, digits));
  const f = 10 ** -digits;
  return Number(pyToFixed(x / f, 0)) * f;
}
