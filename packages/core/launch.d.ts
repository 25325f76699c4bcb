// Types of launch.js (plain JavaScript so that it runs on Node 20).

/** The environment variable that sets the heap size (MiB) or, with 0, turns the sizing off. */
export declare const HEAP_SIZE_ENV: 'QONTRACT_MAX_OLD_SPACE_MB';

/**
 * The `--max-old-space-size` (MiB) for a container memory limit in bytes, or
 * `undefined` when there is no limit.
 */
export declare function heapSizeForMemoryLimit(limitBytes: number | undefined): number | undefined;

export interface HeapSizeInput {
  /** NODE_OPTIONS. */
  readonly nodeOptions?: string | undefined;
  /** node's own command-line options (process.execArgv). */
  readonly execArgv?: readonly string[];
  /** QONTRACT_MAX_OLD_SPACE_MB. */
  readonly override?: string | undefined;
  /** The container's memory limit, if any. */
  readonly limitBytes?: number | undefined;
}

/** The flag the launcher adds (none when `flag` is absent), and why. Throws on a bad override. */
export declare function decideHeapSize(input: HeapSizeInput): {
  readonly flag?: string;
  readonly reason: string;
};

/** The environment variable that turns the collector's tuning off (`off`) or on (`on`, the default). */
export declare const GC_TUNING_ENV: 'QONTRACT_GC_TUNING';

/** The collector flags the launcher adds, each unless node was given it. */
export declare const GC_FLAGS: readonly string[];

/** The first line of every command's bin: `#!/usr/bin/env -S node` with GC_FLAGS. */
export declare const SHEBANG: string;

/** The collector flags to add (those of GC_FLAGS not given), and why. Throws on a bad setting. */
export declare function decideGcTuning(input: {
  readonly nodeOptions?: string | undefined;
  readonly execArgv?: readonly string[];
  /** QONTRACT_GC_TUNING: `on` (default) or `off`. */
  readonly setting?: string | undefined;
}): { readonly flags: string[]; readonly reason: string };

/**
 * Node's options for the run: `execArgv` (default process.execArgv) without the
 * collector flags that must not apply (QONTRACT_GC_TUNING=off, or an option
 * NODE_OPTIONS gives), then what launchFlags adds. Throws on a bad setting.
 */
export declare function launchExecArgv(
  env?: Readonly<Record<string, string | undefined>>,
  execArgv?: readonly string[],
): string[];

/**
 * Every V8 flag the launcher adds for `env` (default process.env) and node's
 * `execArgv`: the heap size, then the collector's tuning. Throws on a bad setting.
 */
export declare function launchFlags(
  env?: Readonly<Record<string, string | undefined>>,
  execArgv?: readonly string[],
): string[];

/** The memory limit of this process's cgroup in bytes, or `undefined` when there is none. */
export declare function readContainerMemoryLimit(
  root?: string,
  procSelfCgroup?: string,
): number | undefined;

/** The distributions' CA bundle files; the launcher trusts the first that exists. */
export declare const SYSTEM_CA_BUNDLES: readonly string[];

/**
 * The CA bundle the launcher adds to Node's own CAs (none when `file` is absent), and why:
 * nothing when NODE_EXTRA_CA_CERTS or --use-system-ca is given, else SSL_CERT_FILE, else the
 * first of SYSTEM_CA_BUNDLES that exists.
 */
export declare function decideCaBundle(
  env?: Readonly<Record<string, string | undefined>>,
  execArgv?: readonly string[],
  exists?: (file: string) => boolean,
): { readonly file?: string; readonly reason: string };

/** Runs `exportName` of the TypeScript module `entry` under a suitable Node and heap size. */
export declare function launch(entry: string, exportName: string, program?: string): Promise<void>;
