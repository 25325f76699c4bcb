import { describe, expect, it } from 'vitest';
import {
  parseTemplateVariables,
  type RenderOptions,
  renderTemplate,
  TemplateError,
} from './index.ts';
import {
  compareNumeric,
  intAdd,
  intDivMod,
  intMul,
  intSub,
  intTrueDiv,
  normalizeInt,
  type PyInt,
  toBigInt,
} from './python-int.ts';

// Template-level behaviour is checked against real Jinja2 in src/fixtures/jinja2-cases.json
// (the "big int" / "exact" cases). These tests cover what that table cannot reach: the
// primitives on many random operands, variables handed in by a caller, and the original's filters.

function render(body: string, overrides: Partial<RenderOptions> = {}): Promise<string> {
  return renderTemplate(body, {
    type: 'jinja2',
    path: '/resources/ints.yml',
    variables: {},
    helpers: {},
    ...overrides,
  });
}

async function failure(body: string): Promise<TemplateError> {
  const result = await render(body).then(
    (out) => new Error(`rendered ${JSON.stringify(out)}`),
    (e: unknown) => e,
  );
  expect(result).toBeInstanceOf(TemplateError);
  return result as TemplateError;
}

/** A deterministic stream of ints around the interesting magnitudes (0, 2^53, 2^64, 2^200). */
function* sampleInts(count: number): Generator<bigint> {
  let seed = 12345n;
  const next = () => {
    seed = (seed * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
    return seed;
  };
  const magnitudes = [3n, 2n ** 26n, 2n ** 52n, 2n ** 53n, 2n ** 54n, 2n ** 64n, 2n ** 200n];
  for (let i = 0; i < count; i++) {
    const m = magnitudes[Number(next() % BigInt(magnitudes.length))]!;
    const offset = next() % 7n;
    const base = (next() * m) / 2n ** 64n;
    const v = next() % 3n === 0n ? m - offset : base + offset;
    yield next() % 2n === 0n ? v : -v;
  }
}

function asPyInt(b: bigint): PyInt {
  return normalizeInt(b);
}

/** The exact rational value of a finite double, as numerator / denominator. */
function rational(x: number): [bigint, bigint] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const sign = bits >> 63n ? -1n : 1n;
  const exponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = exponent === 0 ? fraction : fraction | (1n << 52n);
  const e = (exponent === 0 ? 1 : exponent) - 1075;
  return e >= 0 ? [sign * mantissa * 2n ** BigInt(e), 1n] : [sign * mantissa, 2n ** BigInt(-e)];
}

function bitsOf(x: number): bigint {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  return view.getBigUint64(0);
}

/** The next double above or below a non-negative double (their bit patterns order like the values). */
function neighbour(x: number, up: boolean): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, bitsOf(x) + (up ? 1n : -1n));
  return view.getFloat64(0);
}

/** Whether `c` is the double nearest to a/b (ties to an even last bit), judged with exact rationals. */
function isCorrectlyRounded(a: bigint, b: bigint, c: number): boolean {
  const n = a < 0n ? -a : a;
  const d = b < 0n ? -b : b;
  const magnitude = Math.abs(c);
  if (c !== 0 && c < 0 !== (a < 0n !== b < 0n)) return false;
  // |n/d - x| as a fraction, compared by cross-multiplication.
  const distance = (x: number): [bigint, bigint] => {
    const [num, den] = rational(x);
    const diff = n * den - num * d;
    return [diff < 0n ? -diff : diff, d * den];
  };
  const [dc, qc] = distance(magnitude);
  const others =
    magnitude > 0
      ? [neighbour(magnitude, true), neighbour(magnitude, false)]
      : [neighbour(0, true)];
  for (const other of others) {
    const [dn, qn] = distance(other);
    const closer = dn * qc;
    const ours = dc * qn;
    if (closer < ours) return false;
    if (closer === ours && (bitsOf(magnitude) & 1n) === 1n) return false;
  }
  return true;
}

describe('exact int primitives (python-int.ts)', () => {
  const values = [...sampleInts(400)];

  it('keep ints beyond 2^53 as bigint and only those', () => {
    for (const v of values) {
      const i = asPyInt(v);
      expect(typeof i === 'bigint').toBe(v > 2n ** 53n - 1n || v < -(2n ** 53n - 1n));
      expect(toBigInt(i)).toBe(v);
    }
  });

  it('+, -, *, // and % agree with exact integer arithmetic (Python floors)', () => {
    for (let i = 0; i + 1 < values.length; i++) {
      const a = values[i]!;
      const b = values[i + 1]!;
      if (b === 0n) continue;
      const x = asPyInt(a);
      const y = asPyInt(b);
      expect(toBigInt(intAdd(x, y))).toBe(a + b);
      expect(toBigInt(intSub(x, y))).toBe(a - b);
      expect(toBigInt(intMul(x, y))).toBe(a * b);
      const [q, r] = intDivMod(x, y);
      expect(toBigInt(q) * b + toBigInt(r)).toBe(a);
      expect(toBigInt(r) === 0n || toBigInt(r) < 0n === b < 0n).toBe(true);
      expect(toBigInt(r) < 0n ? -toBigInt(r) : toBigInt(r)).toBeLessThan(b < 0n ? -b : b);
      for (const v of [intAdd(x, y), intSub(x, y), intMul(x, y), q, r]) {
        // The invariant every result keeps: a bigint only beyond the safe range, else a safe number.
        expect(
          typeof v === 'bigint'
            ? v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)
            : Number.isSafeInteger(v),
        ).toBe(true);
        expect(Object.is(v, -0)).toBe(false);
      }
    }
  });

  it('int / int is the exact quotient correctly rounded to a float', () => {
    const cases: [bigint, bigint][] = [];
    for (let i = 0; i + 1 < values.length; i++)
      if (values[i + 1] !== 0n) cases.push([values[i]!, values[i + 1]!]);
    // Subnormal and near-overflow quotients, and halfway cases.
    cases.push(
      [1n, 10n ** 320n],
      [-3n, 10n ** 315n],
      [10n ** 308n * 17n, 10n],
      [2n ** 54n + 3n, 2n],
      [36028797018963969n, 3n],
      [36028797018963969n, 9n],
      [(2n ** 53n + 1n) * 2n ** 80n, 2n ** 80n],
    );
    for (const [a, b] of cases) {
      const c = intTrueDiv(asPyInt(a), asPyInt(b));
      expect(isCorrectlyRounded(a, b, c), `${a} / ${b} = ${c}`).toBe(true);
    }
  });

  it('compares ints and floats by exact value', () => {
    expect(compareNumeric(2n ** 53n + 1n, 2 ** 53)).toBe(1);
    expect(compareNumeric(2n ** 64n, 2 ** 64)).toBe(0);
    expect(compareNumeric(-(2n ** 64n) - 1n, -(2 ** 64))).toBe(-1);
    expect(compareNumeric(10n ** 400n, Number.POSITIVE_INFINITY)).toBe(-1);
    expect(compareNumeric(10n ** 400n, Number.NaN)).toBeNaN();
  });
});

describe('ints from outside the template', () => {
  it('resource variables (JSON text) are read exactly, as json.loads reads them', async () => {
    const variables = parseTemplateVariables(
      '{"id": 123456789012345678901, "ids": [-9007199254740993, 9007199254740993e0], "n": 9007199254740993}',
    );
    expect(
      await render('{{ id }} {{ ids }} {{ n + 1 }} {{ n is integer }} {{ {"n": n}|tojson }}', {
        variables,
      }),
    ).toBe(
      '123456789012345678901 [-9007199254740993, 9007199254740992.0] 9007199254740994 True {"n": 9007199254740993}',
    );
  });

  it('bigint values from a caller stay exact; JavaScript numbers keep the value they already have', async () => {
    const out = await render('{{ a }} {{ a - 1 }} {{ b }} {{ b + 1 }} {{ c }} {{ d.e * 2 }}', {
      // `b` stands for a JSON.parse'd number: 9007199254740993 in the source arrives as …992.
      variables: {
        a: 2n ** 64n + 1n,
        b: JSON.parse('9007199254740993') as number,
        c: 5n,
        d: { e: 1e20 },
      },
    });
    expect(out).toBe(
      '18446744073709551617 18446744073709551616 9007199254740992 9007199254740993 5 200000000000000000000',
    );
  });

  it('json_to_dict and yaml_to_dict read big integers exactly (json.loads, PyYAML)', async () => {
    const out = await render(
      `{{ ('{"a": 123456789012345678901, "b": [-9007199254740993, 1.0]}'|json_to_dict) }}|` +
        `{{ ("a: 123456789012345678901\\nb: 0x1ffffffffffffffff\\nc: 1_000_000_000_000_000_001\\n" ~
            "d: 190:20:30\\ne: 017\\nf: -9007199254740993\\n18446744073709551617: k\\nh: 1.0\\ni: 12")|yaml_to_dict }}`,
    );
    expect(out).toBe(
      "{'a': 123456789012345678901, 'b': [-9007199254740993, 1.0]}|" +
        "{'a': 123456789012345678901, 'b': 36893488147419103231, 'c': 1000000000000000001, " +
        "'d': 685230, 'e': 15, 'f': -9007199254740993, '18446744073709551617': 'k', 'h': 1.0, 'i': 12}",
    );
  });

  it('JSONPath filters compare big integer literals exactly', async () => {
    const variables = parseTemplateVariables(
      '{"items": [{"id": 123456789012345678901, "name": "a"}, {"id": 123456789012345678900, "name": "b"}]}',
    );
    const out = await render(
      "{{ items|extract_jsonpath('$[?(@.id == 123456789012345678901)].name') }} {{ items|extract_jsonpath('$[?(@.id < 123456789012345678901)].id') }}",
      { variables },
    );
    expect(out).toBe("['a'] [123456789012345678900]");
  });

  it('hash_list and flatten_dict print big ints exactly', async () => {
    const out = await render(
      '{{ hash_list([9007199254740993, 2**64]) }} {{ flatten_dict({"a": {"b": 2**64 + 1}}) }}',
    );
    // sha256 of 'a' + the sorted str() of the items, as the original computes it in Python.
    expect(out).toBe(
      "7ba28567f90cc18ee91f568ddddaaa175dca26c17cd8645322f49f108c7360a2 {'a.b': '18446744073709551617'}",
    );
  });
});

describe('exact ints: errors and limits', () => {
  it('names the Python exception of a failed conversion', async () => {
    expect((await failure('{{ 10**400 + 1.0 }}')).reason).toBe(
      'OverflowError: int too large to convert to float',
    );
    expect((await failure('{{ 10**400 / 3 }}')).reason).toBe(
      'OverflowError: integer division result too large for a float',
    );
    expect((await failure('{{ 10**5000 }}')).reason).toMatch(
      /^ValueError: Exceeds the limit \(4300 digits\) for integer string conversion/,
    );
    expect((await failure("{{ 'ab' * -(2**64) }}")).reason).toBe(
      "OverflowError: cannot fit 'int' into an index-sized integer",
    );
  });

  it('refuses ints too large to compute quickly instead of hanging', async () => {
    const started = performance.now();
    expect((await failure('{{ 7 ** (2**40) % 10 }}')).reason).toMatch(/^LimitExceeded: integer/);
    expect((await failure('{% set x = 2**1000000 %}{{ (x * x) % 10 }}')).reason).toMatch(
      /^LimitExceeded: integer/,
    );
    expect(
      (await failure('{{ 1 ** (2**64) }} {{ (-1) ** (2**64 + 1) }} {{ 2 ** (2**64) }}')).reason,
    ).toMatch(/^LimitExceeded: integer/);
    expect(await render('{{ 1 ** (2**64) }} {{ (-1) ** (2**64 + 1) }} {{ 0 ** (2**64) }}')).toBe(
      '1 -1 0',
    );
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
