import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ScaffoldRequest {
  /** CLI name with dashes, e.g. `openshift-foo`. */
  readonly name: string;
  readonly description: string;
  /** Repository root. */
  readonly root: string;
}

const NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** `openshift-foo` → `openshiftFoo` */
export function camelName(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `openshift-foo` → `OpenshiftFoo` */
function pascalName(name: string): string {
  const camel = camelName(name);
  return camel[0]!.toUpperCase() + camel.slice(1);
}

/** The files of a new integration package, by path relative to the repository root. */
export function integrationFiles(req: ScaffoldRequest): Record<string, string> {
  const { name, description } = req;
  const dir = `integrations/${name}`;
  const camel = camelName(name);
  const pascal = pascalName(name);
  const pkg = {
    name: `@qontract/integration-${name}`,
    version: '0.1.0',
    private: true,
    description,
    type: 'module',
    license: 'Apache-2.0',
    exports: {
      '.': { types: './src/index.ts', default: './src/index.ts' },
      './package.json': './package.json',
    },
    scripts: {
      build: 'tsc -p tsconfig.build.json',
      typecheck: 'tsc -p tsconfig.json',
      lint: 'biome check .',
      test: 'vitest run',
    },
    dependencies: {
      '@qontract/app-interface': '*',
      '@qontract/core': '*',
      '@qontract/openshift': '*',
    },
    devDependencies: {},
  };
  return {
    [`${dir}/package.json`]: `${JSON.stringify(pkg, null, 2)}\n`,
    [`${dir}/tsconfig.json`]: `{\n  "extends": "../../tsconfig.base.json",\n  "include": ["src/**/*.ts"]\n}\n`,
    [`${dir}/tsconfig.build.json`]:
      '{\n  "extends": "./tsconfig.json",\n  "compilerOptions": { "noEmit": false, "rootDir": "src", "outDir": "dist" },\n  "exclude": ["src/**/*.test.ts"]\n}\n',
    [`${dir}/src/${name}.graphql`]: `# The desired state this integration reads from app-interface.
# Run \`npm run codegen\` after editing; it writes ${name}.generated.ts beside this file.
query ${pascal}Namespaces {
  namespaces: namespaces_v1 {
    path
    name
    delete
    clusterAdmin
    cluster {
      ...ClusterConnection
    }
    managedResourceNames {
      resource
      resourceNames
    }
  }
}
`,
    [`${dir}/src/desired.ts`]: `import type { DesiredBody } from '@qontract/openshift';

/**
 * The desired state of ${name}: pure functions of app-interface data.
 * No I/O here; the engine reads the clusters, plans and applies.
 */

/** The kind this integration reads, writes and may delete (its own objects only). */
export const MANAGED_TYPE = 'ConfigMap';

export interface ${pascal}Namespace {
  readonly path: string;
  readonly name: string;
  readonly delete?: boolean | null;
  readonly cluster: { readonly name: string };
}

/** The namespaces this integration manages. */
export function isManagedNamespace(ns: ${pascal}Namespace): boolean {
  return !ns.delete;
}

/** One object per managed namespace of a cluster with a working client. */
export function desired${pascal}(input: {
  readonly namespaces: readonly ${pascal}Namespace[];
  readonly clusters: ReadonlySet<string>;
}): DesiredBody[] {
  return input.namespaces
    .filter((ns) => input.clusters.has(ns.cluster.name))
    .map((ns) => ({
      cluster: ns.cluster.name,
      namespace: ns.name,
      source: ns.path,
      body: { apiVersion: 'v1', kind: MANAGED_TYPE, metadata: { name: '${name}' }, data: {} },
    }));
}
`,
    [`${dir}/src/desired.test.ts`]: `import { describe, expect, it } from 'vitest';
import { desired${pascal}, isManagedNamespace } from './desired.ts';

const ns = (name: string, cluster: string, deleted = false) => ({
  path: \`/\${cluster}/\${name}.yml\`,
  name,
  delete: deleted,
  cluster: { name: cluster },
});

describe('desired${pascal}', () => {
  it.each([
    { title: 'no namespace', namespaces: [], expected: [] },
    {
      title: 'one object per namespace of a reachable cluster',
      namespaces: [ns('a', 'c1'), ns('b', 'unreachable')],
      expected: [{ cluster: 'c1', namespace: 'a', source: '/c1/a.yml' }],
    },
  ])('$title', ({ namespaces, expected }) => {
    expect(
      desired${pascal}({ namespaces, clusters: new Set(['c1']) }).map(({ body: _body, ...rest }) => rest),
    ).toEqual(expected);
  });

  it('leaves namespaces being deleted alone', () => {
    expect(isManagedNamespace(ns('a', 'c1', true))).toBe(false);
    expect(isManagedNamespace(ns('a', 'c1'))).toBe(true);
  });
});
`,
    [`${dir}/src/index.ts`]: `import { gqlClient } from '@qontract/app-interface';
import { defineEngineIntegration, specsForKind } from '@qontract/openshift';
import { desired${pascal}, isManagedNamespace, MANAGED_TYPE } from './desired.ts';
import { ${pascal}NamespacesDocument } from './${name}.generated.ts';

/** The \`qontract.integration\` annotation of the objects it writes, and their version. */
const QONTRACT_INTEGRATION = '${name.replaceAll('-', '_')}';
const QONTRACT_INTEGRATION_VERSION = '0.1.0';

export const ${camel} = defineEngineIntegration({
  name: '${name}',
  identity: QONTRACT_INTEGRATION,
  version: QONTRACT_INTEGRATION_VERSION,
  description: ${JSON.stringify(description)},
  load: async (ctx) => {
    const gql = await ctx.client(gqlClient);
    const { namespaces } = await gql.query(${pascal}NamespacesDocument);
    return (namespaces ?? []).filter(isManagedNamespace);
  },
  targets: { namespaces: (managed) => managed },
  nothingToDo: 'no namespace is managed by ${name}',
  specs: (managed) => specsForKind(managed, MANAGED_TYPE),
  desired: (managed, { clusters }) => ({ objects: desired${pascal}({ namespaces: managed, clusters }) }),
});
`,
    [`${dir}/README.md`]: `# ${name}

${description}

## What it manages

Describe the objects this integration owns, where their desired state comes from
(${name}.graphql) and what it never touches.

## Options

| option | default | meaning |
| --- | --- | --- |
| \`--thread-pool-size\` | 10 | concurrent requests |
| \`--internal\` / \`--external\` | both | only internal or only external clusters |

## Example

\`\`\`
qontract-reconcile --config examples/config.toml --dry-run ${name}
\`\`\`
`,
  };
}

const ENTRY_MARKER = '  // registry:entries';

/**
 * Adds the integration to the CLI's registry source text: one lazy entry
 * (name, description, import), so `--help` and other integrations' runs
 * never load it.
 */
export function registerInRegistry(source: string, name: string, description: string): string {
  const load = `import('@qontract/integration-${name}')`;
  if (source.includes(load)) return source;
  if (!source.includes(ENTRY_MARKER)) throw new Error('registry.ts has lost its generator marker');
  const quote = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
  const entry = `  lazy(${quote(name)}, ${quote(description)}, async () => (await ${load}).${camelName(name)}),`;
  return source.replace(ENTRY_MARKER, `${entry}\n${ENTRY_MARKER}`);
}

/** Writes the package and registers it; refuses to overwrite an existing integration. */
export async function scaffoldIntegration(req: ScaffoldRequest): Promise<string[]> {
  if (!NAME.test(req.name)) {
    throw new Error(
      `invalid integration name '${req.name}': use lowercase words separated by dashes`,
    );
  }
  const files = integrationFiles(req);
  const dir = join(req.root, 'integrations', req.name);
  try {
    await readFile(join(dir, 'package.json'));
    throw new Error(`integrations/${req.name} already exists`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(req.root, path, '..'), { recursive: true });
    await writeFile(join(req.root, path), content);
  }
  const registryPath = join(req.root, 'packages/cli/src/registry.ts');
  await writeFile(
    registryPath,
    registerInRegistry(await readFile(registryPath, 'utf8'), req.name, req.description),
  );
  const cliPkgPath = join(req.root, 'packages/cli/package.json');
  const cliPkg = JSON.parse(await readFile(cliPkgPath, 'utf8')) as {
    dependencies: Record<string, string>;
  };
  cliPkg.dependencies[`@qontract/integration-${req.name}`] = '*';
  cliPkg.dependencies = Object.fromEntries(
    Object.entries(cliPkg.dependencies).sort(([a], [b]) => a.localeCompare(b)),
  );
  await writeFile(cliPkgPath, `${JSON.stringify(cliPkg, null, 2)}\n`);
  return [...Object.keys(files), 'packages/cli/src/registry.ts', 'packages/cli/package.json'];
}
