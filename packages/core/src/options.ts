/**
 * Integration options: a small typed description from which the CLI builds
 * yargs options and the integration gets a typed `opts` object.
 */
interface OptionBase {
  readonly describe: string;
  /** The flag; default: the option key in kebab-case. */
  readonly flag?: string;
  /** Environment variable read when the flag is absent (the original's `envvar=`). */
  readonly env?: string;
  /** A one-letter short flag (`u` for `-u`), as the original's click option declares. */
  readonly alias?: string;
}
export interface BooleanOption extends OptionBase {
  readonly type: 'boolean';
  readonly default: boolean;
}
/** `--internal/--external` style: true, false, or unset (undefined). */
export interface TriStateOption extends OptionBase {
  readonly type: 'tristate';
  /** The flag that sets the value to false, e.g. `external`. */
  readonly negation: string;
}
export interface NumberOption extends OptionBase {
  readonly type: 'number';
  readonly default?: number;
  readonly integer?: boolean;
}
export interface StringOption extends OptionBase {
  readonly type: 'string';
  readonly default?: string;
  readonly choices?: readonly string[];
}
/** A repeatable flag (`--cluster-name a --cluster-name b`). */
export interface ListOption extends OptionBase {
  readonly type: 'list';
}
/**
 * A required positional argument (the original's `click.argument`), after the
 * integration's name, in the order the options declare them; its name in the
 * usage is the flag (`<gitlab-project-id>`).
 */
interface ArgumentOption extends Omit<OptionBase, 'env' | 'alias'> {
  readonly type: 'argument';
}
export type OptionSpec =
  | BooleanOption
  | TriStateOption
  | NumberOption
  | StringOption
  | ListOption
  | ArgumentOption;
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

type ValueOf<S extends OptionSpec> = S extends BooleanOption
  ? boolean
  : S extends TriStateOption
    ? boolean | undefined
    : S extends NumberOption
      ? S['default'] extends number
        ? number
        : number | undefined
      : S extends StringOption
        ? S['default'] extends string
          ? string
          : string | undefined
        : S extends ListOption
          ? string[]
          : S extends ArgumentOption
            ? string
            : never;

export type InferOptions<O extends OptionSpecs> = { -readonly [K in keyof O]: ValueOf<O[K]> };

function kebabCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export function flagOf(key: string, spec: OptionSpec): string {
  return spec.flag ?? kebabCase(key);
}

/** The original's shared option decorators (`reconcile/cli.py`). */
export const commonOptions = {
  threadPoolSize: (defaultValue = 10) =>
    ({
      type: 'number',
      integer: true,
      default: defaultValue,
      describe: 'number of concurrent requests per cluster / API',
    }) as const satisfies NumberOption,
  internal: () =>
    ({
      type: 'tristate',
      negation: 'external',
      describe: 'manage only internal (--internal) or only external (--external) clusters',
    }) as const satisfies TriStateOption,
  clusterName: () =>
    ({
      type: 'list',
      describe: 'cluster name to act on (repeatable)',
    }) as const satisfies ListOption,
  excludeCluster: () =>
    ({
      type: 'list',
      describe: 'cluster to exclude from this run (repeatable, dry-run only)',
    }) as const satisfies ListOption,
  namespaceName: () =>
    ({ type: 'string', describe: 'namespace name to act on' }) as const satisfies StringOption,
  takeOver: (defaultValue = true) =>
    ({
      type: 'boolean',
      default: defaultValue,
      describe: 'manage resources exclusively (take over existing ones)',
    }) as const satisfies BooleanOption,
  /** Watch mode of the engine-based integrations (`WATCH=true` under run-integration). */
  watch: () =>
    ({
      type: 'boolean',
      default: false,
      env: 'WATCH',
      describe:
        'run as an operator: keep list+watch caches of the managed kinds, revert drift as it happens, apply app-interface changes as they come; a run lasts --watch-resync-seconds',
    }) as const satisfies BooleanOption,
  watchResyncSeconds: () =>
    ({
      type: 'number',
      default: 600,
      env: 'SLEEP_DURATION_SECS',
      describe: 'with --watch: seconds between full reconciles (read from the caches)',
    }) as const satisfies NumberOption,
  vaultOutputPath: () =>
    ({
      type: 'string',
      default: '',
      describe: 'path in Vault to write output secrets to',
    }) as const satisfies StringOption,
} as const;

type OptionValue = string | number | boolean | string[] | undefined;
export type OptionValues = Record<string, OptionValue>;
