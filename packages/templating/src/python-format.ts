/**
 * Python's `%` string formatting and `str.format`, hand-written because
 * templates (`str_format`, `"%s" % x`, `"{}".format(x)`) must print exactly
 * what the Python original prints and no npm library follows Python's rules.
 */
import { checkStringSize } from './context.ts';
import { failure } from './errors.ts';
import { floatToInt, intAbs, intToDecimal, type PyInt, toBigInt } from './python-int.ts';
import { pyToFixed } from './python-round.ts';
import {
  dictGet,
  floatValue,
  intValue,
  isDict,
  isFloat,
  isInt,
  isNumber,
  isTuple,
  pyFloat,
  pyRepr,
  pyStr,
  reprNumber,
  toNumber,
  typeName,
} from './values.ts';

interface Spec {
  fill: string;
  align: string;
  sign: string;
  alternate: boolean;
  zero: boolean;
  width: number;
  grouping: string;
  precision: number | undefined;
  type: string;
}

function pad(body: string, spec: Spec, defaultAlign: string): string {
  if (body.length >= spec.width) return body;
  checkStringSize(spec.width);
  const align = spec.align || defaultAlign;
  const n = spec.width - body.length;
  if (align === '=') {
    const signLen = /^[-+ ]/.test(body) ? 1 : 0;
    const prefixLen = /^[-+ ]?0[xXob]/.test(body) && spec.alternate ? signLen + 2 : signLen;
    return body.slice(0, prefixLen) + spec.fill.repeat(n) + body.slice(prefixLen);
  }
  if (align === '<') return body + spec.fill.repeat(n);
  if (align === '^') {
    const left = Math.floor(n / 2);
    return spec.fill.repeat(left) + body + spec.fill.repeat(n - left);
  }
  return spec.fill.repeat(n) + body;
}

function exponential(x: number, precision: number, upper: boolean): string {
  const [m = '', e = '0'] = x.toExponential(precision).split('e');
  const exp = Number(e);
  const text = `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return upper ? text.toUpperCase() : text;
}

function general(x: number, precision: number, alternate: boolean, upper: boolean): string {
  const p = Math.min(precision === 0 ? 1 : precision, 100);
  if (x === 0) return alternate ? `0.${'0'.repeat(p - 1)}` : '0';
  const exp = Math.floor(Math.log10(Math.abs(Number(x.toExponential(p - 1)))));
  let text: string;
  if (exp < -4 || exp >= p) {
    text = exponential(x, p - 1, upper);
    if (!alternate) text = text.replace(/\.?0+(?=[eE])/, '');
  } else {
    text = pyToFixed(x, Math.max(0, p - 1 - exp));
    if (!alternate && text.includes('.')) text = text.replace(/\.?0+$/, '');
  }
  return text;
}

function withSign(text: string, negative: boolean, sign: string): string {
  if (negative) return `-${text}`;
  if (sign === '+') return `+${text}`;
  if (sign === ' ') return ` ${text}`;
  return text;
}

function group(intText: string, sep: string): string {
  return sep ? intText.replace(/\B(?=(\d{3})+(?!\d))/g, sep) : intText;
}

function formatNumber(value: unknown, spec: Spec, percentStyle: boolean): string {
  const type = spec.type;
  if (!isNumber(value) && typeof value !== 'boolean') {
    const needs = 'diouxXc'.includes(type) ? 'a real number is required' : 'must be real number';
    throw failure.type(
      percentStyle
        ? `%${type} format: ${needs}, not ${typeName(value)}`
        : `Unknown format code '${type}' for object of type '${typeName(value)}'`,
    );
  }
  const float = isFloat(value);
  // Ints stay exact for the integer types; the float types convert them as Python's float() does.
  const int: PyInt | undefined = float ? undefined : intValue(value as PyInt | boolean);
  const exact: PyInt | number = int ?? toNumber(value);
  let negative = exact < 0 || Object.is(exact, -0);
  const floatType = type !== '' && 'fFeEgG%'.includes(type);
  const x = int === undefined ? toNumber(value) : floatType ? floatValue(int) : 0;
  const abs = Math.abs(x);
  let body: string;
  switch (type) {
    case 'd':
    case 'i':
    case 'u': {
      if (!percentStyle && float) {
        throw failure.value(`Unknown format code 'd' for object of type 'float'`);
      }
      // `'%d' % 2.5e20` prints the float's exact integer part; `'%d' % -0.5` is `0`.
      const whole = int ?? floatToInt(x);
      negative = whole < 0;
      body = group(intToDecimal(intAbs(whole)), spec.grouping);
      break;
    }
    case 'x':
    case 'X':
    case 'o':
    case 'b': {
      if (int === undefined) {
        throw percentStyle
          ? failure.type(`%${type} format: an integer is required, not float`)
          : failure.value(`Unknown format code '${type}' for object of type 'float'`);
      }
      const radix = type === 'o' ? 8 : type === 'b' ? 2 : 16;
      body = toBigInt(intAbs(int)).toString(radix);
      if (type === 'X') body = body.toUpperCase();
      if (spec.alternate) body = `0${type === 'X' ? 'X' : type}${body}`;
      break;
    }
    case 'f':
    case 'F':
      body = Number.isFinite(abs)
        ? group(pyToFixed(abs, spec.precision ?? 6), spec.grouping)
        : abs === Infinity
          ? 'inf'
          : 'nan';
      break;
    case 'e':
    case 'E':
      body = exponential(abs, spec.precision ?? 6, type === 'E');
      break;
    case 'g':
    case 'G':
      body = general(abs, spec.precision ?? 6, spec.alternate, type === 'G');
      break;
    case '%':
      body = `${pyToFixed(abs * 100, spec.precision ?? 6)}%`;
      break;
    case '':
      body =
        spec.precision !== undefined
          ? general(
              int === undefined ? abs : Math.abs(floatValue(int)),
              spec.precision,
              false,
              false,
            )
          : int === undefined
            ? reprNumber(pyFloat(abs))
            : intToDecimal(intAbs(int));
      break;
    default:
      throw failure.value(`Unknown format code '${type}' for object of type '${typeName(value)}'`);
  }
  const signed = withSign(body, negative && !Number.isNaN(exact), spec.sign);
  if (spec.zero && !spec.align) return pad(signed, { ...spec, fill: '0', align: '=' }, '>');
  return pad(signed, spec, '>');
}

/** `fmt % value` with Python's rules for tuples, mappings and the conversion types. */
export function pyPercentFormat(fmt: string, value: unknown): string {
  const args = isTuple(value) ? [...value] : [value];
  const mapping = isDict(value) ? value : undefined;
  let argIndex = 0;
  let usedMapping = false;
  const re = /%(?:\(([^)]*)\))?([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?[hlL]?(.)?/gs;
  const out = fmt.replace(
    re,
    (
      _m,
      key: string | undefined,
      flags: string,
      width: string | undefined,
      prec: string | undefined,
      type: string | undefined,
    ) => {
      if (type === undefined) throw failure.value('incomplete format');
      if (type === '%' && key === undefined) return '%';
      const next = (): unknown => {
        if (argIndex >= args.length) throw failure.type('not enough arguments for format string');
        return args[argIndex++];
      };
      let arg: unknown;
      const widthValue = width === '*' ? toNumber(next()) : width ? Number(width) : 0;
      const precValue =
        prec === '*' ? toNumber(next()) : prec !== undefined ? Number(prec) : undefined;
      if (key !== undefined) {
        if (!mapping) throw failure.type('format requires a mapping');
        usedMapping = true;
        const hit = dictGet(mapping, key);
        if (!hit.found) throw failure.runtime(`KeyError: '${key}'`);
        arg = hit.value;
      } else arg = next();
      const spec: Spec = {
        fill: ' ',
        align: flags.includes('-') ? '<' : '',
        sign: flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '',
        alternate: flags.includes('#'),
        zero: flags.includes('0') && !flags.includes('-'),
        width: widthValue,
        grouping: '',
        precision: precValue,
        type,
      };
      if (type === 's' || type === 'r' || type === 'a') {
        let text = type === 's' ? pyStr(arg) : pyRepr(arg);
        if (precValue !== undefined) text = text.slice(0, precValue);
        return pad(text, { ...spec, zero: false }, '>');
      }
      if (type === 'c') {
        const text = typeof arg === 'string' ? arg : String.fromCodePoint(toNumber(arg));
        return pad(text, spec, '>');
      }
      if (!'diouxXeEfFgG'.includes(type)) {
        throw failure.value(`unsupported format character '${type}'`);
      }
      return formatNumber(arg, spec, true);
    },
  );
  // Python treats any non-tuple subscriptable argument (list, dict) as a mapping: no leftover check.
  const mappingLike = !isTuple(value) && (Array.isArray(value) || isDict(value));
  if (!usedMapping && argIndex < args.length && !mappingLike) {
    throw failure.type('not all arguments converted during string formatting');
  }
  return out;
}

function parseSpec(text: string): Spec {
  const m = /^(?:(.)?([<>=^]))?([-+ ])?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?([a-zA-Z%])?$/s.exec(text);
  if (!m) throw failure.value('Invalid format specifier');
  return {
    fill: m[1] ?? (m[5] && !m[2] ? '0' : ' '),
    align: m[2] ?? '',
    sign: m[3] ?? '',
    alternate: m[4] === '#',
    zero: m[5] === '0',
    width: m[6] ? Number(m[6]) : 0,
    grouping: m[7] ?? '',
    precision: m[8] !== undefined ? Number(m[8]) : undefined,
    type: m[9] ?? '',
  };
}

function formatField(value: unknown, specText: string): string {
  const spec = parseSpec(specText);
  if (typeof value === 'string' || value === null || Array.isArray(value) || isDict(value)) {
    if (spec.type !== '' && spec.type !== 's') {
      throw failure.value(
        `Unknown format code '${spec.type}' for object of type '${typeName(value)}'`,
      );
    }
    let text = pyStr(value);
    if (spec.precision !== undefined) text = text.slice(0, spec.precision);
    return pad(text, spec, '<');
  }
  if (spec.type === '' && spec.precision === undefined && !spec.sign && !spec.grouping) {
    return pad(pyStr(value), spec, '>');
  }
  if (spec.type === '' && isInt(value)) return formatNumber(value, { ...spec, type: 'd' }, false);
  return formatNumber(value, spec, false);
}

/** `"...".format(*args, **kwargs)` with field names, `!r`/`!s` and format specs. */
export function pyFormatMethod(
  fmt: string,
  args: unknown[],
  kwargs: Record<string, unknown>,
): string {
  let auto = 0;
  return fmt.replace(
    /\{\{|\}\}|\{([^{}!:]*)(?:!([rsa]))?(?::([^{}]*))?\}/g,
    (whole, field: string | undefined, conv: string | undefined, spec: string | undefined) => {
      if (whole === '{{') return '{';
      if (whole === '}}') return '}';
      const path = (field ?? '').split(/(?=[.[])/);
      const head = path.shift() ?? '';
      let value: unknown;
      if (head === '') {
        if (auto >= args.length)
          throw failure.runtime(`IndexError: Replacement index ${auto} out of range`);
        value = args[auto++];
      } else if (/^\d+$/.test(head)) {
        const i = Number(head);
        if (i >= args.length)
          throw failure.runtime(`IndexError: Replacement index ${i} out of range`);
        value = args[i];
      } else {
        if (!Object.hasOwn(kwargs, head)) throw failure.runtime(`KeyError: '${head}'`);
        value = kwargs[head];
      }
      for (const part of path) {
        const key = part.startsWith('.') ? part.slice(1) : part.slice(1, -1);
        if (isDict(value)) {
          const hit = dictGet(value, key);
          if (!hit.found) throw failure.runtime(`KeyError: '${key}'`);
          value = hit.value;
        } else if (Array.isArray(value) && /^\d+$/.test(key)) {
          value = value[Number(key)];
        } else throw failure.security('access to attributes in format strings is not allowed');
      }
      if (conv === 'r' || conv === 'a') value = pyRepr(value);
      else if (conv === 's') value = pyStr(value);
      return formatField(value, spec ?? '');
    },
  );
}
