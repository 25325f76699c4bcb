import type { BundleDiff, SchemaDiff } from '@qontract/app-interface';
import type { SaasEnvironmentChange } from '@qontract/saas';
import type { LocatedProblem } from './bundles.ts';
import type { PlannedAction } from './child-run.ts';

type IntegrationStatus = 'skipped' | 'no-changes' | 'changes' | 'failed';

/** The outcome of one integration, as the report shows it. */
export interface IntegrationReport {
  readonly name: string;
  /** Its integration file (bundle key under `data/`). */
  readonly file: string;
  readonly status: IntegrationStatus;
  /** Why it was selected or skipped. */
  readonly reason: string;
  /** The `qontract-reconcile` arguments of the run (after the config). */
  readonly command?: readonly string[];
  readonly exitCode?: number;
  readonly earlyExit?: boolean;
  /** The check decided the early exit in its own process: no process ran for it. */
  readonly inProcess?: boolean;
  readonly shards?: readonly string[] | null;
  readonly durationSeconds?: number;
  readonly actions?: readonly PlannedAction[];
  readonly errors?: readonly string[];
  /** A dry-run of the change tester: the (saas file, environment) and the targets the MR touches. */
  readonly saas?: SaasEnvironmentChange;
}

interface FileChange {
  readonly path: string;
  readonly change: 'added' | 'removed' | 'changed';
  readonly schema?: string | null;
}

export interface MrCheckReport {
  readonly passed: boolean;
  readonly base: { readonly source: string; readonly sha256: string | null };
  readonly head: { readonly source: string; readonly sha256: string | null };
  readonly bundle: { readonly valid: boolean; readonly problems: readonly LocatedProblem[] };
  readonly changes: {
    readonly datafiles: readonly FileChange[];
    readonly resources: readonly FileChange[];
    readonly schemas: readonly FileChange[];
  };
  readonly integrations: readonly IntegrationReport[];
}

/** The report's list of changed files, from the bundle diff. */
export function changeList(diff: BundleDiff, schemaDiff: SchemaDiff): MrCheckReport['changes'] {
  const kind = (o: unknown, n: unknown): FileChange['change'] =>
    o === undefined ? 'added' : n === undefined ? 'removed' : 'changed';
  return {
    datafiles: Object.values(diff.datafiles).map((c) => ({
      path: `data${c.datafilepath}`,
      change: kind(c.old, c.new),
      schema: c.datafileschema,
    })),
    resources: Object.values(diff.resources).map((c) => ({
      path: `resources${c.resourcepath}`,
      change: kind(c.old, c.new),
      schema: (c.new ?? c.old)?.$schema ?? null,
    })),
    schemas: [
      ...schemaDiff.schemas.map((s) => ({ path: `schemas${s.path}`, change: s.change })),
      ...(schemaDiff.graphqlChanged
        ? [{ path: 'graphql-schemas/schema.yml', change: 'changed' as const }]
        : []),
    ],
  };
}

const ICON: Record<IntegrationStatus, string> = {
  skipped: '⚪',
  'no-changes': '🟢',
  changes: '🟡',
  failed: '🔴',
};

/** A short outcome text, shared by the report and the progress lines. */
export function outcomeText(r: IntegrationReport): string {
  switch (r.status) {
    case 'skipped':
      return r.saas ? 'removed, nothing to dry-run' : 'skipped';
    case 'no-changes':
      return r.earlyExit ? 'no changes (early exit)' : 'no changes';
    case 'changes': {
      const n = r.actions?.length ?? 0;
      return `${n} change${n === 1 ? '' : 's'}${shardText(r)}`;
    }
    case 'failed':
      // Without an exit code nothing ran (the change tester could not compare the saas files).
      return r.exitCode === undefined
        ? 'failed'
        : `failed (exit code ${r.exitCode})${shardText(r)}`;
  }
}

function shardText(r: IntegrationReport): string {
  return r.shards?.length
    ? ` in shard${r.shards.length === 1 ? '' : 's'} ${r.shards.join(', ')}`
    : '';
}

/** Markdown table cells: no pipes or newlines. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** A fence longer than any backtick run in the text, so a diff cannot close it. */
function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(longest + 1);
}

function actionTitle(a: PlannedAction): string {
  const where = [a.cluster, a.namespace].filter(Boolean).join('/');
  const title = [a.action, where, a.kind, a.name].filter(Boolean).join(' ');
  // A delete the run's deletion gate held back (the run has errors): not what merging would do.
  return a.outcome === 'disabled' ? `${title} (held back: the run has errors)` : title;
}

function seconds(r: IntegrationReport): string {
  return r.durationSeconds === undefined ? '' : `${r.durationSeconds.toFixed(1)}s`;
}

/** The report as markdown fit for a merge-request comment. */
export function renderMarkdown(report: MrCheckReport): string {
  const out: string[] = [];
  const short = (sha: string | null) => (sha ? `\`${sha.slice(0, 12)}\`` : '(no bundle)');
  out.push(`## qontract-mr-check: ${report.passed ? '✅ passed' : '❌ failed'}`, '');
  out.push(
    `Base ${short(report.base.sha256)} (${report.base.source}) → head ${short(report.head.sha256)} (${report.head.source})`,
    '',
  );

  if (report.bundle.valid) {
    out.push('**Bundle:** ✅ the head bundle is valid.', '');
  } else {
    const n = report.bundle.problems.length;
    out.push(`**Bundle:** ❌ the head bundle has ${n} problem${n === 1 ? '' : 's'}:`, '');
    for (const p of report.bundle.problems) {
      const where = p.line === undefined ? p.file : `${p.file}:${p.line}`;
      out.push(`- \`${where}\` (${p.kind}): ${p.reason}`);
    }
    out.push('');
  }

  const { datafiles, resources, schemas } = report.changes;
  const all = [...datafiles, ...resources, ...schemas];
  if (all.length === 0) {
    out.push('**Changes:** none.', '');
  } else {
    out.push(
      `<details><summary><b>Changes:</b> ${datafiles.length} data file(s), ${resources.length} resource(s), ${schemas.length} schema(s)</summary>`,
      '',
      '| change | file | schema |',
      '| --- | --- | --- |',
    );
    for (const c of all)
      out.push(`| ${c.change} | \`${cell(c.path)}\` | ${cell(c.schema ?? '')} |`);
    out.push('', '</details>', '');
  }

  const header = ['| integration | result | why | time |', '| --- | --- | --- | --- |'];
  const row = (r: IntegrationReport) =>
    `| ${cell(r.name)} | ${ICON[r.status]} ${cell(outcomeText(r))} | ${cell(r.reason)} | ${seconds(r)} |`;
  // A saas pair HEAD no longer deploys is not a dry-run, but the reviewer must see it.
  const shown = (r: IntegrationReport) => r.status !== 'skipped' || r.saas !== undefined;
  const ran = report.integrations.filter(shown);
  const skipped = report.integrations.filter((r) => !shown(r));
  if (report.integrations.length > 0) {
    out.push('### Integrations', '');
    if (ran.length > 0) out.push(...header, ...ran.map(row), '');
    else out.push('None ran.', '');
    // The skipped ones matter when one should have run: there, but out of the way.
    if (skipped.length > 0) {
      out.push(
        `<details><summary>${skipped.length} skipped</summary>`,
        '',
        ...header,
        ...skipped.map(row),
        '',
        '</details>',
        '',
      );
    }
  }

  for (const r of report.integrations) {
    if (r.status !== 'changes' && r.status !== 'failed' && !r.saas) continue;
    out.push(`### ${ICON[r.status]} ${r.name}: ${outcomeText(r)}`, '');
    if (r.command) out.push(`\`qontract-reconcile ${r.command.join(' ')}\``, '');
    if (r.saas) out.push(...saasTargets(r.saas));
    if (r.status === 'failed' && r.errors?.length) {
      const text = r.errors.join('\n');
      const f = fence(text);
      out.push(f, text, f, '');
    }
    if (r.status === 'failed' && r.actions?.length) {
      out.push(
        'The plan up to the failure (after an error a run deletes nothing: its deletes are held back):',
        '',
      );
    }
    for (const a of r.actions ?? []) {
      const title = actionTitle(a);
      if (!a.unifiedDiff) {
        out.push(`- \`${title}\``);
        continue;
      }
      const f = fence(a.unifiedDiff);
      out.push(
        `<details><summary><code>${escapeHtml(title)}</code></summary>`,
        '',
        `${f}diff`,
        a.unifiedDiff.replace(/\n$/, ''),
        f,
        '',
        '</details>',
      );
    }
    out.push('');
  }
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}

/** The targets a change-tester dry-run is for, and the compare links of changed refs. */
function saasTargets(pair: SaasEnvironmentChange): string[] {
  const out = [
    `Targets of \`${pair.saasFilePath}\` in ${pair.environment} the merge request touches:`,
    '',
    '| target | resource template | namespace | change | ref |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const t of pair.targets) {
    const what = t.change === 'changed' ? `changed: ${t.fields.join(', ')}` : t.change;
    const ref =
      t.ref.base !== null && t.ref.head !== null && t.ref.base !== t.ref.head
        ? `${t.ref.base} → ${t.ref.head}`
        : (t.ref.head ?? t.ref.base ?? '');
    out.push(
      `| ${cell(t.target ?? 'default')} | ${cell(t.resourceTemplate)} | ${cell(`${t.cluster}/${t.namespace}`)} | ${cell(what)} | \`${cell(ref)}\` |`,
    );
  }
  out.push('');
  if (pair.compareUrls.length > 0) {
    out.push('Diffs:', '', ...pair.compareUrls.map((u) => `- ${u}`), '');
  }
  return out;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
