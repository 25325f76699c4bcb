import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import {
  createEmbeddedEngine,
  diffBundleSchemas,
  diffBundles,
  type EmbeddedEngineLike,
  engineTransport,
  GqlBackendError,
  type GqlTransportSource,
  gqlTransportSource,
  startBundleServer,
} from '@qontract/app-interface';
import { decideEarlyExitOf, integrationNames } from '@qontract/cli/embedding';
import { errorMessage, QontractError, SecretRedactor } from '@qontract/core';
import type { SaasEnvironmentChange } from '@qontract/saas';
import pLimit from 'p-limit';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import {
  buildBundlePair,
  type CheckedBundle,
  type LocatedProblem,
  validateBuilt,
} from './bundles.ts';
import { integrationArgv, runChild } from './child-run.ts';
import { Progress } from './progress.ts';
import { changeList, type IntegrationReport, type MrCheckReport, outcomeText } from './report.ts';
import { saasChanges, saasDeployArgs, saasEntryName } from './saas.ts';
import {
  CHANGE_TESTER,
  type IntegrationFile,
  integrationFiles,
  type PrCheck,
  prCheckCommand,
  SAAS_DEPLOY,
  selectIntegration,
  summarizeChanges,
} from './select.ts';

interface Output {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export interface MrCheckOptions {
  /** The target branch: an app-interface directory or a bundle.json. */
  readonly base: string;
  /** The merge request: an app-interface directory or a bundle.json. */
  readonly head: string;
  /** The config.toml the integrations run with (its `[graphql]` is replaced). */
  readonly configPath: string;
  /** Integrations run at once; default: the machine's cores. */
  readonly jobs?: number;
  /** Each integration's process is stopped after this long and reported failed; default: never. */
  readonly timeoutSeconds?: number;
  /** Environment of the integrations' processes; default: this process's. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where progress goes; default: stderr (live lines on a terminal). */
  readonly progress?: Output;
  readonly signal?: AbortSignal;
}

/** Variables of the umbrella CLI the check sets itself, not inherited. */
const CHILD_ENV_OVERRIDES = [
  'EARLY_EXIT_COMPARE_SHA',
  'CHECK_ONLY_AFFECTED_SHARDS',
  'SHOW_DIFF',
  'LOG_FORMAT',
  'QONTRACT_CONFIG',
  'DRY_RUN',
];

/**
 * The merge-request check: validates HEAD, diffs it against BASE, selects
 * the integrations the changes concern and dry-runs each in its own process
 * against HEAD with early exit against BASE (both bundles served by one
 * local qontract-server), then returns the report. Writes nothing anywhere
 * but its own temporary directory.
 */
export async function runMrCheck(options: MrCheckOptions): Promise<MrCheckReport> {
  const config = await readConfig(options.configPath);
  const redactor = secretsOf(config);
  // The trees share almost every file: the base reuses the head's parses and
  // serialized text where the bytes are the same (a worker reads the files).
  const { base, head } = await buildBundlePair(options.base, options.head);
  if (!base.bundle || !base.sha256 || base.problems.length > 0) {
    throw new QontractError(
      `base ${options.base} cannot be loaded:\n${base.problems.map((p) => `  - ${p.file}: ${p.reason}`).join('\n')}`,
    );
  }
  const report = (
    problems: readonly LocatedProblem[],
    changes: MrCheckReport['changes'],
    integrations: IntegrationReport[],
  ): MrCheckReport =>
    redactReport(
      {
        passed: problems.length === 0 && integrations.every((i) => i.status !== 'failed'),
        base: { source: options.base, sha256: base.sha256 },
        head: { source: options.head, sha256: head.sha256 },
        bundle: { valid: problems.length === 0, problems },
        changes,
        integrations,
      },
      redactor,
    );
  const noChanges = { datafiles: [], resources: [], schemas: [] };
  if (!head.bundle || !head.sha256) {
    return report((await validateBuilt(head)).problems, noChanges, []);
  }

  const diff = diffBundles(base.bundle, head.bundle);
  const schemaDiff = diffBundleSchemas(base.bundle, head.bundle);
  const changes = changeList(diff, schemaDiff);
  const { files, problems: fileProblems } = integrationFiles(head.bundle);
  const problemsWith = (validated: CheckedBundle) => [
    ...validated.problems,
    ...fileProblems.map((p) => ({ ...p, kind: 'SCHEMA' as const })),
  ];
  // An invalid head fails without integration results, as the original's CI
  // does. What loading already found ends the check here; validation runs
  // beside the integrations (below) and stops them when it finds a problem.
  if (head.problems.length > 0 || fileProblems.length > 0) {
    return report(problemsWith(await validateBuilt(head)), changes, []);
  }

  const summary = summarizeChanges(diff, schemaDiff);
  const registered = new Set(integrationNames);
  const selections = files.map((file) => ({
    file,
    selection: selectIntegration(file, summary, registered),
  }));
  const selected = selections
    .flatMap((s) => (s.selection.kind === 'run' ? [{ ...s, prCheck: s.selection.prCheck }] : []))
    .sort(
      (a, b) =>
        (a.prCheck.run_order ?? Number.MAX_SAFE_INTEGER) -
        (b.prCheck.run_order ?? Number.MAX_SAFE_INTEGER),
    );

  // Results by integration file; the change tester has one per (saas file, environment).
  const results = new Map<string, IntegrationReport[]>();
  const record = (file: string, r: IntegrationReport) =>
    results.set(file, [...(results.get(file) ?? []), r]);
  if (selected.length === 0) {
    const problems = problemsWith(await validateBuilt(head));
    return report(problems, changes, problems.length > 0 ? [] : assemble(selections, results));
  }
  // The integrations ask the same big queries (the openshift-resources
  // family shares its documents), early exit asks them of both bundles: each
  // is answered once per bundle and shared, frozen, by the server and the
  // early-exit decisions taken in this process.
  const engines = {
    base: createEmbeddedEngine(base.bundle, base.sha256, options.base, { memoize: true }),
    head: createEmbeddedEngine(head.bundle, head.sha256, options.head, { memoize: true }),
  };
  const jobs: Job[] = [];
  for (const { file, selection, prCheck } of selected) {
    if (prCheckCommand(prCheck) !== CHANGE_TESTER) {
      jobs.push({ name: file.name, file, reason: selection.reason, prCheck });
      continue;
    }
    for (const r of await saasJobs(file, selection.reason, prCheck, engines, options, jobs)) {
      record(file.name, r);
    }
  }

  if (jobs.length === 0) {
    const problems = problemsWith(await validateBuilt(head));
    return report(problems, changes, problems.length > 0 ? [] : assemble(selections, results));
  }
  const dir = await mkdtemp(join(tmpdir(), 'qontract-mr-check-'));
  const server = await startBundleServer([engines.base, engines.head], { cache: true });
  const progress = new Progress(options.progress ?? process.stderr);
  // Stops the integrations when validation fails, or when the caller stops the check.
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  let problems: LocatedProblem[];
  const done = new Map<Job, IntegrationReport>();
  try {
    const configPath = join(dir, 'config.toml');
    await writeFile(configPath, childConfig(config, options.configPath, `${server.url}/graphql`));
    const env: Record<string, string | undefined> = { ...(options.env ?? process.env) };
    for (const key of CHILD_ENV_OVERRIDES) delete env[key];
    const answers = answersFrom(engines);
    const limit = pLimit(Math.max(1, options.jobs ?? availableParallelism()));
    progress.start(jobs.map((j) => j.name));
    const finish = (job: Job, r: IntegrationReport) => {
      if (stop.signal.aborted) {
        progress.update(job.name, 'failed', `stopped: ${errorMessage(stop.signal.reason)}`);
        return;
      }
      done.set(job, r);
      progress.update(
        job.name,
        r.status === 'changes' || r.status === 'failed' ? r.status : 'no changes',
        detail(r),
      );
    };
    // Early exits are decided first, here and outside the limit: the
    // integrations that ask the same query share one answer per bundle, and
    // a process starts only for what the decision does not settle.
    const decisions = jobs.map((job, i) => {
      const run = {
        configPath,
        baseSha: base.sha256!,
        planFile: join(dir, `plan-${i}.json`),
        env,
        signal,
        command: job.command,
        timeoutMs: options.timeoutSeconds === undefined ? undefined : options.timeoutSeconds * 1000,
      };
      return { job, run, decided: decideInProcess(job, run, answers) };
    });
    const running = Promise.all(
      decisions.map(async ({ job, run, decided }) => {
        const settled = await decided;
        if (signal.aborted) return;
        if (settled && 'report' in settled) return finish(job, settled.report);
        await limit(async () => {
          if (signal.aborted) return;
          progress.update(job.name, 'running');
          finish(job, await runIntegration(job, { ...run, affectedShards: settled?.shards }));
        });
      }),
    );
    // This thread validates the head once the decisions are taken, while the
    // integrations' processes run.
    await Promise.all(decisions.map((d) => d.decided));
    try {
      problems = problemsWith(await validateBuilt(head));
    } catch (e) {
      stop.abort(e);
      await running.catch(() => undefined);
      throw e;
    }
    if (problems.length > 0) stop.abort(new Error('the head bundle is invalid'));
    await running;
  } finally {
    progress.stop();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
  if (problems.length > 0) return report(problems, changes, []);
  // In the order of the jobs (run order, then the change tester's pairs).
  for (const job of jobs) {
    const r = done.get(job);
    if (r) record(job.file.name, r);
  }
  return report([], changes, assemble(selections, results));
}

/** One process to run: an integration's `pr_check`, or one dry-run of the change tester. */
interface Job {
  /** Its name in the report and the progress lines. */
  readonly name: string;
  readonly file: IntegrationFile;
  readonly reason: string;
  readonly prCheck: PrCheck;
  /** The integration and its arguments, when not `pr_check.cmd`. */
  readonly command?: readonly string[];
  readonly saas?: SaasEnvironmentChange;
}

/**
 * The change tester (upstream's `openshift-saas-deploy-change-tester`): the
 * saas targets the MR touches, then one dry-run job of `openshift-saas-deploy`
 * for each (saas file, environment) of them, against HEAD (pushed onto
 * `jobs`). What needs no process is returned: no saas target changed, the
 * saas files do not load, or HEAD no longer deploys a pair.
 */
async function saasJobs(
  file: IntegrationFile,
  reason: string,
  prCheck: PrCheck,
  engines: { base: EmbeddedEngineLike; head: EmbeddedEngineLike },
  options: Pick<MrCheckOptions, 'base' | 'head'>,
  jobs: Job[],
): Promise<IntegrationReport[]> {
  const common = { file: `data${file.path}`, reason };
  let pairs: SaasEnvironmentChange[];
  try {
    pairs = await saasChanges(
      { engine: engines.base, source: options.base },
      { engine: engines.head, source: options.head },
    );
  } catch (e) {
    return [
      {
        ...common,
        name: SAAS_DEPLOY,
        status: 'failed',
        errors: [`${CHANGE_TESTER}: cannot compare the saas files: ${errorMessage(e)}`],
      },
    ];
  }
  if (pairs.length === 0) {
    return [
      {
        ...common,
        name: SAAS_DEPLOY,
        status: 'no-changes',
        reason: `${reason}; no saas target changed`,
      },
    ];
  }
  const gone: IntegrationReport[] = [];
  // The pair's dry-run is a plain one: no early exit (the change tester has none).
  const dryRun: PrCheck = { ...prCheck, early_exit: false, check_only_affected_shards: false };
  for (const pair of pairs) {
    const name = saasEntryName(pair);
    const why = `${changedTargetsText(pair)} (${CHANGE_TESTER})`;
    if (pair.inHead) {
      jobs.push({
        name,
        file,
        reason: why,
        prCheck: dryRun,
        command: saasDeployArgs(pair),
        saas: pair,
      });
    } else {
      gone.push({
        ...common,
        name,
        status: 'skipped',
        reason: `${why}: HEAD no longer deploys ${pair.saasFile} to ${pair.environment}, nothing to dry-run; openshift-saas-deploy deletes nothing for a removed target (\`delete: true\` on a target removes its objects)`,
        saas: pair,
      });
    }
  }
  return gone;
}

/** "1 target changed", "2 targets changed, 1 added". */
function changedTargetsText(pair: SaasEnvironmentChange): string {
  const counts = new Map<string, number>();
  for (const t of pair.targets) counts.set(t.change, (counts.get(t.change) ?? 0) + 1);
  return [...counts]
    .map(([change, n], i) =>
      i > 0 ? `${n} ${change}` : `${n} target${n === 1 ? '' : 's'} ${change}`,
    )
    .join(', ');
}

/** Every selected integration's results; the others skipped, with why. */
function assemble(
  selections: ReadonlyArray<{
    file: { name: string; path: string };
    selection: { reason: string };
  }>,
  results: ReadonlyMap<string, readonly IntegrationReport[]>,
): IntegrationReport[] {
  return selections.flatMap(
    ({ file, selection }): readonly IntegrationReport[] =>
      results.get(file.name) ?? [
        {
          name: file.name,
          file: `data${file.path}`,
          status: 'skipped',
          reason: selection.reason,
        },
      ],
  );
}

/** The progress line's detail: what the status alone does not say. */
function detail(r: IntegrationReport): string {
  if (r.status === 'no-changes') return r.earlyExit ? 'early exit' : '';
  if (r.status === 'changes') return outcomeText(r);
  if (r.status === 'failed') return outcomeText(r).replace(/^failed(?: \((.*)\))?/, '$1');
  return '';
}

/** The check's bundles as the backend of in-process runs: HEAD, or BASE by its sha. */
function answersFrom(engines: { base: EmbeddedEngineLike; head: EmbeddedEngineLike }) {
  const source: GqlTransportSource = async (sha) => {
    if (sha === undefined || sha === engines.head.sha256) {
      return engineTransport(engines.head, 'HEAD');
    }
    if (sha === engines.base.sha256) return engineTransport(engines.base, 'BASE');
    throw new GqlBackendError(`bundle ${sha} is neither the base nor the head of the check`);
  };
  return new Map<string, unknown>([[gqlTransportSource.id, source]]);
}

/**
 * The integration's early exit, decided in this process from the bundles in
 * memory, as its process would decide it first: when the desired state is
 * the same in both bundles no process is needed (the openshift-resources
 * family shares one query, so its siblings cost one answer per bundle
 * instead of a process each), and the shards a sharded dry-run must run are
 * passed to its process, which does not compare again. Null when the process
 * must decide (no early exit, or a failure here, which it then reports).
 */
async function decideInProcess(
  job: Job,
  run: Parameters<typeof runChild>[1],
  answers: ReadonlyMap<string, unknown>,
): Promise<{ report: IntegrationReport } | { shards: readonly string[] } | null> {
  if (!job.prCheck.early_exit || job.command) return null;
  const started = performance.now();
  const argv = integrationArgv(job.prCheck, run);
  let decision: Awaited<ReturnType<typeof decideEarlyExitOf>>;
  try {
    decision = await decideEarlyExitOf(argv, {
      env: run.env,
      io: { stdout: discard, stderr: discard },
      clients: answers,
      ...(run.signal ? { signal: run.signal } : {}),
    });
  } catch {
    return null;
  }
  if (decision?.kind === 'shards' && job.prCheck.check_only_affected_shards) {
    return { shards: decision.shards };
  }
  if (decision?.kind !== 'exit') return null;
  return {
    report: {
      name: job.name,
      file: `data${job.file.path}`,
      reason: job.reason,
      command: reportedCommand(argv),
      exitCode: 0,
      earlyExit: true,
      inProcess: true,
      shards: null,
      durationSeconds: (performance.now() - started) / 1000,
      status: 'no-changes',
      actions: [],
    },
  };
}

/** What the in-process decisions log: the process that runs after a non-exit logs it again. */
const discard = { write: () => true };

/** The arguments a reader of the report needs: the temporary config and plan paths say nothing. */
function reportedCommand(argv: readonly string[]): string[] {
  return argv.slice(2).filter((a, i, all) => a !== '--plan-out' && all[i - 1] !== '--plan-out');
}

async function runIntegration(
  job: Job,
  options: Parameters<typeof runChild>[1],
): Promise<IntegrationReport> {
  const r = await runChild(job.prCheck, options);
  const common = {
    name: job.name,
    file: `data${job.file.path}`,
    reason: job.reason,
    ...(job.saas ? { saas: job.saas } : {}),
    command: reportedCommand(r.argv),
    exitCode: r.exitCode,
    earlyExit: r.earlyExit,
    shards: r.shards,
    durationSeconds: r.durationMs / 1000,
  };
  if (r.exitCode !== 0) {
    return { ...common, status: 'failed', errors: r.errors, actions: r.actions ?? [] };
  }
  const actions = r.actions ?? [];
  return { ...common, status: actions.length > 0 ? 'changes' : 'no-changes', actions };
}

async function readConfig(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new QontractError(`${path}: cannot read the config file`);
  }
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (e) {
    throw new QontractError(`${path}: not valid TOML: ${e instanceof Error ? e.message : e}`);
  }
}

/**
 * The integrations' config: the user's, with `[graphql]` pointed at the
 * check's own server, and relative paths resolved against the user's config
 * directory (the copy lives in a temporary directory).
 */
function childConfig(
  config: Record<string, unknown>,
  sourcePath: string,
  graphqlUrl: string,
): string {
  const copy: Record<string, unknown> = { ...config, graphql: { server: graphqlUrl } };
  const state = config.state as Record<string, unknown> | undefined;
  if (state && typeof state.path === 'string' && !isAbsolute(state.path)) {
    copy.state = { ...state, path: resolve(dirname(sourcePath), state.path) };
  }
  return stringifyToml(copy);
}

/** Keys of config.toml whose values are addresses and names, not secrets. */
const NOT_SECRET = new Set([
  'server',
  'url',
  'provider',
  'path',
  'region',
  'bucket',
  'kube_auth_role',
  'kube_auth_mount',
]);

/**
 * Every other string of config.toml (tokens, passwords, secret ids, the
 * values of the config-file secret reader) is masked in the report: a
 * second line of defence behind the integrations' own redaction.
 */
function secretsOf(config: unknown): SecretRedactor {
  const redactor = new SecretRedactor();
  const walk = (value: unknown, key: string) => {
    if (typeof value === 'string') {
      if (!NOT_SECRET.has(key)) redactor.add(value);
    } else if (Array.isArray(value)) {
      for (const v of value) walk(v, key);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, k);
    }
  };
  walk(config, '');
  return redactor;
}

function redactReport(report: MrCheckReport, redactor: SecretRedactor): MrCheckReport {
  if (redactor.size === 0) return report;
  return JSON.parse(redactor.redact(JSON.stringify(report))) as MrCheckReport;
}
