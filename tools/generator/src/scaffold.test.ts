import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { integrations } from '@qontract/cli';
import { describe, expect, it } from 'vitest';
import { renderIntegrationList, replaceIntegrationList } from './readme-list.ts';
import {
  camelName,
  integrationFiles,
  registerInRegistry,
  scaffoldIntegration,
} from './scaffold.ts';

const repoRoot = resolve(import.meta.dirname, '../../..');

describe('new integration generator', () => {
  it('writes a package with definition, query, pure desired state, test and README', () => {
    const files = integrationFiles({
      name: 'openshift-foo',
      description: 'Manages foos.',
      root: '/r',
    });
    expect(Object.keys(files).sort()).toEqual([
      'integrations/openshift-foo/README.md',
      'integrations/openshift-foo/package.json',
      'integrations/openshift-foo/src/desired.test.ts',
      'integrations/openshift-foo/src/desired.ts',
      'integrations/openshift-foo/src/index.ts',
      'integrations/openshift-foo/src/openshift-foo.graphql',
      'integrations/openshift-foo/tsconfig.build.json',
      'integrations/openshift-foo/tsconfig.json',
    ]);
    expect(files['integrations/openshift-foo/src/index.ts']).toContain("name: 'openshift-foo'");
    expect(files['integrations/openshift-foo/src/index.ts']).toContain(
      "QONTRACT_INTEGRATION = 'openshift_foo'",
    );
    expect(JSON.parse(files['integrations/openshift-foo/package.json']!).name).toBe(
      '@qontract/integration-openshift-foo',
    );
  });

  it('registers the integration in the CLI registry as a lazy entry, once', () => {
    const source = 'export const registry = [\n  // registry:entries\n];\n';
    const once = registerInRegistry(source, 'openshift-foo', "Manages foo's bars.");
    expect(once).toBe(
      'export const registry = [\n' +
        `  lazy('openshift-foo', 'Manages foo\\'s bars.', async () => (await import('@qontract/integration-openshift-foo')).openshiftFoo),\n` +
        '  // registry:entries\n];\n',
    );
    expect(registerInRegistry(once, 'openshift-foo', 'x')).toBe(once);
  });

  it('scaffolds into a repository and refuses to overwrite or take a bad name', async () => {
    const root = await mkdtemp(join(tmpdir(), 'qr-gen-'));
    await mkdir(join(root, 'packages/cli/src'), { recursive: true });
    await writeFile(
      join(root, 'packages/cli/src/registry.ts'),
      await readFile(join(repoRoot, 'packages/cli/src/registry.ts'), 'utf8'),
    );
    await writeFile(
      join(root, 'packages/cli/package.json'),
      JSON.stringify({ dependencies: { '@qontract/core': '*' } }),
    );
    const written = await scaffoldIntegration({
      name: 'gitlab-bar',
      description: 'Manages bars.',
      root,
    });
    expect(written).toContain('packages/cli/src/registry.ts');
    const cliPkg = JSON.parse(await readFile(join(root, 'packages/cli/package.json'), 'utf8'));
    expect(cliPkg.dependencies['@qontract/integration-gitlab-bar']).toBe('*');
    expect(await readFile(join(root, 'packages/cli/src/registry.ts'), 'utf8')).toContain(
      "(await import('@qontract/integration-gitlab-bar')).gitlabBar",
    );
    await expect(
      scaffoldIntegration({ name: 'gitlab-bar', description: 'x', root }),
    ).rejects.toThrow('integrations/gitlab-bar already exists');
    await expect(scaffoldIntegration({ name: 'Bad_Name', description: 'x', root })).rejects.toThrow(
      "invalid integration name 'Bad_Name'",
    );
  });

  it('names things consistently', () => {
    expect(camelName('openshift-service-account-tokens')).toBe('openshiftServiceAccountTokens');
  });
});

describe('README integration list', () => {
  it('is in sync with the CLI registry (run `npm run readme` when this fails)', async () => {
    const readme = await readFile(join(repoRoot, 'README.md'), 'utf8');
    expect(replaceIntegrationList(readme, renderIntegrationList(integrations))).toBe(readme);
  });

  it('renders one line per integration, sorted', () => {
    expect(
      renderIntegrationList([
        { name: 'b-int', description: 'B.' },
        { name: 'a-int', description: 'A.' },
      ]),
    ).toBe(
      '- `a-int`: A. ([README](integrations/a-int/README.md))\n- `b-int`: B. ([README](integrations/b-int/README.md))',
    );
  });
});
