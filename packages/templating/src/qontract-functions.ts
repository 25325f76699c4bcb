import { createHash } from 'node:crypto';
import { SecretNotFoundError, type SecretRedactor } from '@qontract/core';
import { compareCodePoints } from '@qontract/pycompat';
import { bindArgs } from './arguments.ts';
import { checkCollectionSize } from './context.ts';
import { failure, RenderFailure } from './errors.ts';
import type { TemplateHelpers } from './helpers.ts';
import { toTemplateValue } from './intake.ts';
import { urlQuote, urlUnquote } from './url-quote.ts';
import {
  BuiltinFunction,
  type Dict,
  dictEntries,
  dictSet,
  isDict,
  isInt,
  newDict,
  type PyDict,
  pyIterate,
  pyRepr,
  pyStr,
  truthy,
  typeName,
  Undefined,
} from './values.ts';

/** What the original's helper functions need from the render that calls them. */
export interface HelperContext {
  readonly helpers: TemplateHelpers;
  /** Renders a helper argument as a strict, standard-delimiter template with the same variables. */
  renderArgument(body: string): Promise<string>;
  /** Renders a `query()` resource as a plain template with the call's keyword arguments. */
  renderPlain(body: string, variables: Record<string, unknown>): Promise<string>;
  readonly vaultCache: Map<string, Promise<Record<string, string> | null>>;
  readonly redactor: SecretRedactor;
  readonly now: () => Date;
  /** Early-exit hashing: external look-ups return descriptions instead of calling helpers. */
  readonly stubExternalLookups: boolean;
}

function need<K extends keyof TemplateHelpers>(
  ctx: HelperContext,
  name: K,
  fn: string,
): NonNullable<TemplateHelpers[K]> {
  const helper = ctx.helpers[name];
  if (!helper) throw failure.runtime(`the '${fn}' helper is not available here`);
  return helper.bind(ctx.helpers) as NonNullable<TemplateHelpers[K]>;
}

function asText(v: unknown): string {
  if (v instanceof Undefined) v.fail();
  return pyStr(v);
}

async function renderText(ctx: HelperContext, v: unknown): Promise<string> {
  return ctx.renderArgument(asText(v));
}

function optionalText(v: unknown): string | undefined {
  return v === null || v === undefined ? undefined : asText(v);
}

/** `hash_list(list)`: sha256 of `"a"` + the sorted `str()` of every element; elements must be scalars. */
function hashList(input: unknown): string {
  const items = pyIterate(input);
  const strings = items.map((el) => {
    if (Array.isArray(el) || isDict(el)) {
      throw failure.runtime(
        `jinja2 hash_list function received non-primitive value ${pyStr(el)}. All values received ${pyStr(items)}`,
      );
    }
    return pyStr(el);
  });
  strings.sort(compareCodePoints);
  return createHash('sha256')
    .update(`a${strings.join('')}`, 'utf8')
    .digest('hex');
}

/** `flatten_dict(d)`: nested keys joined with dots, values as `str()`, `None` values dropped. */
function flattenDict(input: unknown): PyDict {
  if (!isDict(input)) throw failure.type(`flatten_dict() expects a dict, not ${typeName(input)}`);
  const out = newDict();
  const walk = (d: Dict, prefix: string): void => {
    for (const [k, v] of dictEntries(d)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (isDict(v)) walk(v, key);
      else if (v !== null && v !== undefined) {
        checkCollectionSize(out.size + 1);
        dictSet(out, key, pyStr(v));
      }
    }
  };
  walk(input, '');
  return out;
}

/** `yesterday()`: the UTC date one day before now, `YYYY-MM-DD`. */
function yesterday(now: Date): string {
  return new Date(now.getTime() - 24 * 60 * 60 * 1000).toISOString().slice(0, 10);
}

function isNotFound(e: unknown): boolean {
  return e instanceof SecretNotFoundError || (e instanceof Error && /NotFound/.test(e.name));
}

/**
 * `vault(path, key, version=None, allow_not_found=False)`, as the original
 * does it: arguments rendered as templates, `LATEST` (any case) = latest, the
 * whole secret read once per (path, version) and keys looked up in it.
 */
async function vault(ctx: HelperContext, a: Record<string, unknown>): Promise<string | null> {
  const readAll = need(ctx, 'vault', 'vault');
  const path = await renderText(ctx, a.path);
  const key = await renderText(ctx, a.key);
  let version: number | undefined;
  if (isInt(a.version)) version = Number(a.version);
  else if (truthy(a.version)) {
    const text = await renderText(ctx, a.version);
    if (text.toUpperCase() !== 'LATEST') {
      if (!/^\d+$/.test(text)) {
        throw new RenderFailure(
          'FetchSecretError',
          `error fetching secret: invalid version ${JSON.stringify(text)} of ${path}`,
        );
      }
      version = Number(text);
    }
  }
  const cacheKey = JSON.stringify([path, version ?? null]);
  let pending = ctx.vaultCache.get(cacheKey);
  if (!pending) {
    pending = readAll(path, version).then(
      (secret) => {
        for (const value of Object.values(secret))
          if (typeof value === 'string') ctx.redactor.add(value);
        return secret;
      },
      (e: unknown) => {
        if (isNotFound(e)) return null;
        throw e;
      },
    );
    ctx.vaultCache.set(cacheKey, pending);
  }
  let secret: Record<string, string> | null;
  try {
    secret = await pending;
  } catch (e) {
    throw new RenderFailure(
      'FetchSecretError',
      `error fetching secret: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  const allowNotFound = truthy(a.allow_not_found);
  if (secret === null) {
    if (allowNotFound) return null;
    throw new RenderFailure('FetchSecretError', `error fetching secret: secret not found: ${path}`);
  }
  if (!Object.hasOwn(secret, key)) {
    if (allowNotFound) return null;
    throw new RenderFailure(
      'FetchSecretError',
      `error fetching secret: secret field not found: ${path}/${key}`,
    );
  }
  return secret[key] ?? null;
}

/**
 * The original's template helper functions (`vault`, `github`, `query`, `url`,
 * `s3`, `s3_ls`, `urlescape`, `urlunescape`, `hash_list`, `flatten_dict`,
 * `yesterday`), bound to one render.
 */
export function helperFunctions(ctx: HelperContext): Record<string, BuiltinFunction> {
  const fn = (
    name: string,
    params: Parameters<typeof bindArgs>[1],
    run: (a: Record<string, unknown>) => unknown,
  ) => new BuiltinFunction(name, (args, kwargs) => run(bindArgs(name, params, args, kwargs)));
  const s3Params: Parameters<typeof bindArgs>[1] = ['account', 'bucket', 'path', ['region', null]];
  const list = [
    fn('vault', ['path', 'key', ['version', null], ['allow_not_found', false]], (a) =>
      vault(ctx, a),
    ),
    fn('github', ['repo', 'path', 'ref', ['v', null]], async (a) => {
      const get = need(ctx, 'github', 'github');
      return get(
        await renderText(ctx, a.repo),
        await renderText(ctx, a.path),
        await renderText(ctx, a.ref),
      );
    }),
    new BuiltinFunction('query', async (args, kwargs) => {
      if (args.length !== 1)
        throw failure.type(`query() takes exactly one positional argument (${args.length} given)`);
      const resource = need(ctx, 'resource', 'query');
      const graphql = need(ctx, 'graphql', 'query');
      const body = await resource(asText(args[0]));
      const rendered = await ctx.renderPlain(body, kwargs);
      const data = await graphql(rendered);
      const first = Object.values(data)[0];
      if (first === undefined) throw failure.runtime('query() returned no data');
      return toTemplateValue(first);
    }),
    fn('url', ['u'], (a) => need(ctx, 'url', 'url')(asText(a.u))),
    fn('s3', s3Params, (a) =>
      need(ctx, 's3', 's3')(
        asText(a.account),
        asText(a.bucket),
        asText(a.path),
        optionalText(a.region),
      ),
    ),
    fn('s3_ls', s3Params, async (a) =>
      toTemplateValue(
        await need(ctx, 's3Ls', 's3_ls')(
          asText(a.account),
          asText(a.bucket),
          asText(a.path),
          optionalText(a.region),
        ),
      ),
    ),
    fn('urlescape', ['string', ['safe', '/'], ['encoding', null]], (a) =>
      urlQuote(asText(a.string), asText(a.safe), false, a.encoding),
    ),
    fn('urlunescape', ['string', ['encoding', null]], (a) =>
      urlUnquote(asText(a.string), a.encoding),
    ),
    fn('hash_list', ['input'], (a) => hashList(a.input)),
    fn('flatten_dict', ['d'], (a) => flattenDict(a.d)),
    fn('yesterday', [], () => yesterday(ctx.now())),
  ];
  if (ctx.stubExternalLookups) list.push(...stubbedLookups());
  return Object.fromEntries(list.map((f) => [f.name, f]));
}

/**
 * Stand-ins for the look-ups that reach outside app-interface, for the
 * early-exit digest of `enable_query_support` resources: the rendered text
 * names the look-up instead of holding its (possibly secret) result, and `url`
 * is false. `query` is not stubbed: it reads app-interface itself.
 */
function stubbedLookups(): BuiltinFunction[] {
  const describe = (name: string) =>
    new BuiltinFunction(name, (args, kwargs) => {
      const parts = [
        ...args.map((a) => pyRepr(a)),
        ...Object.entries(kwargs).map(([k, v]) => `${k}=${pyRepr(v)}`),
      ];
      return `${name}(${parts.join(', ')})`;
    });
  return [
    describe('vault'),
    describe('github'),
    describe('s3'),
    describe('s3_ls'),
    new BuiltinFunction('url', () => false),
  ];
}

/** `_template_mocks`: each named helper is replaced by a function that returns the given value. */
export function mockFunctions(mocks: unknown): Record<string, BuiltinFunction> {
  if (!isDict(mocks))
    throw failure.type(`_template_mocks must be a mapping, not ${typeName(mocks)}`);
  return Object.fromEntries(
    dictEntries(mocks).map(([name, value]) => [name, new BuiltinFunction(name, () => value)]),
  );
}
