import { SecretRedactor } from '@qontract/core';
import { CompileCache } from './compile.ts';
import {
  Budget,
  DEFAULT_LIMITS,
  type Environment,
  type RenderLimits,
  withBudget,
} from './context.ts';
import { RenderFailure, TemplateError } from './errors.ts';
import { Evaluator, Frame } from './evaluator.ts';
import { STANDARD_FILTERS } from './filters.ts';
import { globalFunctions } from './globals.ts';
import type { TemplateHelpers } from './helpers.ts';
import { toTemplateValue } from './intake.ts';
import { STANDARD_TESTS } from './jinja-tests.ts';
import {
  DEFAULT_WHITESPACE,
  type Delimiters,
  EXTRA_CURLY_DELIMITERS,
  JINJA2_DELIMITERS,
  type WhitespaceOptions,
} from './lexer.ts';
import { QONTRACT_FILTERS } from './qontract-filters.ts';
import { helperFunctions, mockFunctions } from './qontract-functions.ts';
import { type Dict, dictGet, dictKeys, isDict, newDict } from './values.ts';

export type TemplateType = 'jinja2' | 'extracurlyjinja2';

export interface RenderOptions {
  /** `jinja2` (standard delimiters) or `extracurlyjinja2` (`{{{ }}}`, `{{% %}}`, `{{# #}}`). */
  type: TemplateType;
  /** The resource path, named in every error. */
  path: string;
  /**
   * Top-level template variables: the parsed `variables` JSON of the resource
   * plus `resource` (the openshiftResource with its `namespace`). Plain data;
   * `_template_mocks` (a mapping) replaces the named helpers.
   */
  variables: Record<string, unknown>;
  helpers: TemplateHelpers;
  limits?: Partial<RenderLimits>;
  /** Vault secrets by (path, version); pass one map per run to share it across renders. */
  vaultCache?: Map<string, Promise<Record<string, string> | null>>;
  /** Every Vault value read is registered here and masked in error messages. */
  redactor?: SecretRedactor;
  /** The clock behind `yesterday()`. */
  now?: () => Date;
  /**
   * Jinja2's `trim_blocks`, `lstrip_blocks`, `keep_trailing_newline` (the
   * original's `TemplateRenderOptions`); all off by default, as
   * openshift-resources renders. Nested renders (helper arguments) use the defaults.
   */
  whitespace?: Partial<WhitespaceOptions>;
  /**
   * For the early-exit digest (`enable_query_support`): `vault`, `github`,
   * `s3`, `s3_ls` return a description of the call and `url` is false; no
   * helper is called. `_template_mocks` still apply on top.
   */
  stubExternalLookups?: boolean;
}

/** The original's environment: Jinja2's filters plus its own, and Jinja2's tests. */
const QONTRACT_ENV: Environment = {
  filters: Object.assign(
    Object.create(null) as Record<string, never>,
    STANDARD_FILTERS,
    QONTRACT_FILTERS,
  ),
  tests: STANDARD_TESTS,
};

/** A plain `jinja2.Template` (used upstream by the `eval` filter and `query()`): standard filters only. */
const PLAIN_ENV: Environment = { filters: STANDARD_FILTERS, tests: STANDARD_TESTS };

const compileCache = new CompileCache();

/** The compiled-template cache shared by all renders (keyed by type and body). */
export function templateCacheSize(): number {
  return compileCache.size;
}

function delimitersOf(type: TemplateType): Delimiters {
  return type === 'extracurlyjinja2' ? EXTRA_CURLY_DELIMITERS : JINJA2_DELIMITERS;
}

function setAll(frame: Frame, values: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(values)) frame.set(k, v);
}

interface RenderRun {
  readonly budget: Budget;
  readonly options: RenderOptions;
  /** `options.variables` copied into the template value model once per render. */
  readonly variables: Dict;
  readonly vaultCache: Map<string, Promise<Record<string, string> | null>>;
  readonly redactor: SecretRedactor;
}

/** A frame holding the variables (own data properties only), the helpers, then the mocks. */
function contextFrame(run: RenderRun): Frame {
  const root = new Frame();
  setAll(root, globalFunctions(run.budget));
  const frame = new Frame(root);
  const vars = run.variables;
  if (isDict(vars)) for (const k of dictKeys(vars)) frame.set(k, dictGet(vars, k).value);
  setAll(
    frame,
    helperFunctions({
      helpers: run.options.helpers,
      renderArgument: (body) =>
        nested(run, () => renderTree(run, body, 'jinja2', QONTRACT_ENV, true, contextFrame(run))),
      renderPlain: (body, variables) => nested(run, () => renderPlain(run, body, variables)),
      vaultCache: run.vaultCache,
      redactor: run.redactor,
      now: run.options.now ?? (() => new Date()),
      stubExternalLookups: run.options.stubExternalLookups === true,
    }),
  );
  if (isDict(vars)) {
    const mocks = dictGet(vars, '_template_mocks');
    if (mocks.found) setAll(frame, mockFunctions(mocks.value));
  }
  return frame;
}

/** A failure inside a nested template is reported at the outer template's line. */
async function nested(run: RenderRun, fn: () => Promise<string>): Promise<string> {
  try {
    return await run.budget.nested(fn);
  } catch (e) {
    if (e instanceof RenderFailure && e.line !== undefined) {
      throw new RenderFailure(e.kind, `${e.message} (line ${e.line} of a nested template)`);
    }
    throw e;
  }
}

/** A lenient, standard-filter render with only `variables` (upstream's plain `jinja2.Template`). */
function renderPlain(
  run: RenderRun,
  body: string,
  variables: Record<string, unknown>,
): Promise<string> {
  const root = new Frame();
  setAll(root, globalFunctions(run.budget));
  const frame = new Frame(root);
  setAll(frame, variables);
  return renderTree(run, body, 'plain', PLAIN_ENV, false, frame);
}

function renderTree(
  run: RenderRun,
  body: string,
  flavour: TemplateType | 'plain',
  env: Environment,
  strict: boolean,
  frame: Frame,
  whitespace: WhitespaceOptions = DEFAULT_WHITESPACE,
): Promise<string> {
  const delimiters = flavour === 'plain' ? JINJA2_DELIMITERS : delimitersOf(flavour);
  const tree = compileCache.compile(body, flavour, delimiters, env, whitespace);
  const evaluator = new Evaluator({
    env,
    strict,
    budget: run.budget,
    renderString: (text, variables) => nested(run, () => renderPlain(run, text, variables)),
  });
  return evaluator.render(tree, frame);
}

/**
 * Renders a tenant-written template with the original's semantics
 * (sandboxed, strict undefined, no trimming, trailing newline dropped).
 * Every failure is a `TemplateError` naming `options.path` and the line.
 */
export async function renderTemplate(body: string, options: RenderOptions): Promise<string> {
  if (options.type !== 'jinja2' && options.type !== 'extracurlyjinja2') {
    throw new TemplateError(options.path, `unknown template type: ${String(options.type)}`);
  }
  const budget = new Budget({ ...DEFAULT_LIMITS, ...options.limits });
  const run: RenderRun = {
    budget,
    options,
    variables: newDict(),
    vaultCache: options.vaultCache ?? new Map(),
    redactor: options.redactor ?? new SecretRedactor(),
  };
  try {
    return await withBudget(budget, async () => {
      const variables = toTemplateValue(options.variables);
      const ready: RenderRun = { ...run, variables: isDict(variables) ? variables : newDict() };
      const whitespace = { ...DEFAULT_WHITESPACE, ...options.whitespace };
      return await renderTree(
        ready,
        body,
        options.type,
        QONTRACT_ENV,
        true,
        contextFrame(ready),
        whitespace,
      );
    });
  } catch (e) {
    if (e instanceof TemplateError) throw e;
    const failure =
      e instanceof RenderFailure
        ? e
        : e instanceof RangeError && /call stack/i.test(e.message)
          ? new RenderFailure('LimitExceeded', 'template nesting too deep')
          : e instanceof RangeError && /Invalid (string|array) length/.test(e.message)
            ? // A value grew past what the engine can hold before a limit caught it.
              new RenderFailure('LimitExceeded', 'value too large to build')
            : new RenderFailure(
                e instanceof Error ? e.name : 'Error',
                e instanceof Error ? e.message : String(e),
              );
    throw new TemplateError(options.path, run.redactor.redact(failure.describe()), failure.line);
  }
}
