import { describe, expect, it } from 'vitest';
import { Progress } from './progress.ts';
import { type MrCheckReport, renderMarkdown } from './report.ts';

const BASE: MrCheckReport = {
  passed: false,
  base: { source: 'base', sha256: 'a'.repeat(64) },
  head: { source: 'head', sha256: 'b'.repeat(64) },
  bundle: { valid: true, problems: [] },
  changes: {
    datafiles: [{ path: 'data/ns.yml', change: 'changed', schema: '/openshift/namespace-1.yml' }],
    resources: [],
    schemas: [],
  },
  integrations: [
    { name: 'quiet', file: 'data/q.yml', status: 'skipped', reason: 'nothing it reads changed' },
    {
      name: 'early',
      file: 'data/e.yml',
      status: 'no-changes',
      reason: 'reads /x-1.yml (data/ns.yml)',
      earlyExit: true,
      durationSeconds: 1.25,
    },
    {
      name: 'busy',
      file: 'data/b.yml',
      status: 'changes',
      reason: 'reads /openshift/namespace-1.yml (data/ns.yml)',
      shards: ['c1'],
      command: ['--dry-run', 'busy'],
      actions: [
        {
          action: 'apply',
          cluster: 'c1',
          namespace: 'ns',
          kind: 'ConfigMap',
          name: 'cm',
          unifiedDiff: '--- live\n+++ desired\n@@ -1 +1 @@\n-a: ```x```\n+a: y\n',
        },
        { action: 'create_namespace', cluster: 'c1', namespace: 'ns2' },
      ],
    },
    {
      name: 'broken',
      file: 'data/x.yml',
      status: 'failed',
      reason: '`pr_check.always_run`',
      exitCode: 1,
      errors: ['template /t.j2: no filter named shout'],
      actions: [
        {
          action: 'apply',
          cluster: 'c1',
          namespace: 'ns',
          kind: 'Secret',
          name: 's',
          outcome: 'dry-run',
        },
        {
          action: 'delete',
          cluster: 'c1',
          namespace: 'ns',
          kind: 'Secret',
          name: 'old',
          outcome: 'disabled',
        },
      ],
    },
  ],
};

describe('renderMarkdown', () => {
  it('renders the outcome table, one collapsed diff per object, and the errors', () => {
    const md = renderMarkdown(BASE);
    expect(md).toMatch(/^## qontract-mr-check: ❌ failed\n/);
    expect(md).toContain('| quiet | ⚪ skipped | nothing it reads changed |  |');
    expect(md).toContain(
      '| early | 🟢 no changes (early exit) | reads /x-1.yml (data/ns.yml) | 1.3s |',
    );
    expect(md).toContain('| busy | 🟡 2 changes in shard c1 |');
    expect(md).toContain('| broken | 🔴 failed (exit code 1) | `pr_check.always_run` |  |');
    // A diff holding backticks cannot close its fence.
    expect(md).toContain(
      '<details><summary><code>apply c1/ns ConfigMap cm</code></summary>\n\n````diff\n--- live\n+++ desired\n@@ -1 +1 @@\n-a: ```x```\n+a: y\n````\n\n</details>',
    );
    expect(md).toContain('- `create_namespace c1/ns2`');
    expect(md).toContain('```\ntemplate /t.j2: no filter named shout\n```');
    // A delete the failed run's gate held back is not shown as what merging would do.
    expect(md).toContain(
      '- `apply c1/ns Secret s`\n- `delete c1/ns Secret old (held back: the run has errors)`',
    );
  });

  it('lists the problems of an invalid head with file and line', () => {
    const md = renderMarkdown({
      ...BASE,
      bundle: {
        valid: false,
        problems: [
          { file: '/ns.yml', kind: 'REF', reason: 'cluster: $ref /c.yml does not exist', line: 7 },
        ],
      },
      integrations: [],
    });
    expect(md).toContain('**Bundle:** ❌ the head bundle has 1 problem:');
    expect(md).toContain('- `/ns.yml:7` (REF): cluster: $ref /c.yml does not exist');
  });

  it('shows a change-tester dry-run with its targets and compare links, and a pair HEAD no longer deploys', () => {
    const target = {
      resourceTemplate: 'app',
      target: null,
      cluster: 'c1',
      namespace: 'app-stage',
      compareUrl: null,
    };
    const md = renderMarkdown({
      ...BASE,
      integrations: [
        {
          name: 'openshift-saas-deploy (saas-app / stage)',
          file: 'data/app-sre/integrations/openshift-saas-deploy.yml',
          status: 'changes',
          reason: '2 targets changed (openshift-saas-deploy-change-tester)',
          command: ['--dry-run', 'openshift-saas-deploy', '--saas-file-name', 'saas-app'],
          actions: [
            {
              action: 'apply',
              cluster: 'c1',
              namespace: 'app-stage',
              kind: 'Deployment',
              name: 'app',
            },
          ],
          saas: {
            saasFile: 'saas-app',
            saasFilePath: '/services/app/saas-app.yml',
            environment: 'stage',
            inHead: true,
            compareUrls: ['https://github.com/org/app/compare/v1...v2'],
            targets: [
              {
                ...target,
                change: 'changed',
                fields: ['ref'],
                ref: { base: 'v1', head: 'v2' },
                compareUrl: 'https://github.com/org/app/compare/v1...v2',
              },
              {
                ...target,
                target: 'canary',
                change: 'added',
                fields: [],
                ref: { base: null, head: 'main' },
              },
            ],
          },
        },
        {
          name: 'openshift-saas-deploy (saas-old / stage)',
          file: 'data/app-sre/integrations/openshift-saas-deploy.yml',
          status: 'skipped',
          reason:
            '1 target removed (openshift-saas-deploy-change-tester): HEAD no longer deploys saas-old to stage',
          saas: {
            saasFile: 'saas-old',
            saasFilePath: '/services/app/saas-old.yml',
            environment: 'stage',
            inHead: false,
            compareUrls: [],
            targets: [
              { ...target, change: 'removed', fields: [], ref: { base: 'main', head: null } },
            ],
          },
        },
      ],
    });
    expect(md).toContain(
      '| openshift-saas-deploy (saas-app / stage) | 🟡 1 change | 2 targets changed (openshift-saas-deploy-change-tester) |',
    );
    // Not folded away with the skipped ones: the reviewer sees the removal.
    expect(md).toContain(
      '| openshift-saas-deploy (saas-old / stage) | ⚪ removed, nothing to dry-run |',
    );
    expect(md).not.toContain('skipped</summary>');
    expect(md).toContain('### 🟡 openshift-saas-deploy (saas-app / stage): 1 change');
    expect(md).toContain('| default | app | c1/app-stage | changed: ref | `v1 → v2` |');
    expect(md).toContain('| canary | app | c1/app-stage | added | `main` |');
    expect(md).toContain('Diffs:\n\n- https://github.com/org/app/compare/v1...v2\n');
    expect(md).toContain('- `apply c1/app-stage Deployment app`');
    expect(md).toContain(
      '### ⚪ openshift-saas-deploy (saas-old / stage): removed, nothing to dry-run',
    );
    expect(md).toContain('| default | app | c1/app-stage | removed | `main` |');
  });
});

describe('Progress', () => {
  it('writes plain lines off a terminal', () => {
    let out = '';
    let now = 0;
    const p = new Progress({ write: (s: string) => (out += s) }, { tty: false, now: () => now });
    p.start(['a', 'b']);
    p.update('a', 'running');
    now = 2500;
    p.update('a', 'changes', '3 changes');
    p.stop();
    expect(out).toBe('a: running\na: changes (3 changes) 2.5s\n');
  });

  it('redraws one line per integration in place on a terminal', () => {
    let out = '';
    let now = 0;
    const p = new Progress({ write: (s: string) => (out += s) }, { tty: true, now: () => now });
    p.start(['alpha', 'b']);
    p.update('b', 'running');
    now = 1000;
    p.update('b', 'no changes', 'early exit');
    p.stop();
    const last = out.split('\x1b[2A').at(-1)!;
    expect(last).toBe('\x1b[2K  alpha  waiting\n\x1b[2K  b      no changes (early exit) 1.0s\n');
  });
});
