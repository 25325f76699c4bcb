import { type RunContext, type SecretReader, SecretRedactor } from '@qontract/core';
import {
  OpenshiftResource,
  type PyObject,
  parseResource,
  withRecycleAnnotations,
} from '@qontract/openshift';
import { type LoadedTexts, loadInWorkers } from '@qontract/openshift/parse-pool';
import { type DocumentNode, print } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DesiredCache, type DesiredCacheRun } from './desired-cache.ts';
import type { NamespaceData, OpenshiftResourceData, SelectedNamespace } from './model.ts';
import { buildDesired, type ProviderContext } from './providers/index.ts';
import { templateRendererFor } from './templates.ts';

const INTEGRATION = 'openshift_resources';
const VERSION = '1.9.3';

/** A little app-interface for the template helpers: Vault secrets and resource files, editable. */
function world() {
  const vault = new Map<string, Record<string, string>>([['app/db', { password: 'one' }]]);
  const files = new Map<string, string>([['/shared/greeting.gql', '{ hello }']]);
  const calls = { vault: 0, resource: 0, renders: 0 };
  const secrets: SecretReader = {
    read: async () => '',
    readAll: async ({ path }) => {
      calls.vault++;
      const secret = vault.get(path);
      if (!secret) throw new Error(`secret ${path} not found`);
      return secret;
    },
  };
  // Resource files by path; any other query answers with its own text (so an edit shows).
  const gql = {
    query: async (doc: DocumentNode, variables?: { path?: string }) => {
      if (!variables?.path) return { echo: [{ text: print(doc).replace(/\s+/g, ' ') }] };
      calls.resource++;
      const content = files.get(variables.path);
      return {
        resources: content === undefined ? [] : [{ path: variables.path, content, sha256sum: 'x' }],
      };
    },
  };
  const ctx = {
    secrets,
    redactor: new SecretRedactor(),
    env: { vars: {} },
    client: async () => gql,
  } as unknown as RunContext;
  return { vault, files, calls, ctx };
}

function providerContext(
  w: ReturnType<typeof world>,
  cache: DesiredCacheRun,
  bundleSha = 'bundle-1',
): ProviderContext {
  const render = templateRendererFor(w.ctx);
  const counted = Object.assign(
    (body: string, options: Parameters<typeof render>[1]) => {
      w.calls.renders++;
      return render(body, options);
    },
    { replay: render.replay },
  );
  return {
    integration: INTEGRATION,
    integrationVersion: VERSION,
    secrets: w.ctx.secrets,
    render: counted,
    repoUrl: 'https://git.example/app-interface',
    cache,
    bundleSha,
  };
}

const sel = (variables = '{}'): SelectedNamespace => ({
  namespace: { name: 'ns', cluster: { name: 'c1' }, variables } as unknown as NamespaceData,
  openshiftResources: [],
});
const resource = (path: string, content: string) =>
  ({ provider: 'resource', path: { path, content } }) as unknown as OpenshiftResourceData;
const template = (path: string, content: string, variables?: string) =>
  ({
    provider: 'resource-template',
    path: { path, content },
    type: 'jinja2',
    ...(variables ? { variables } : {}),
  }) as unknown as OpenshiftResourceData;

const configMap = (data: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  value: ${data}\n`;
const deployment =
  'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: x\n';

/** Runs `build` as one pipeline run against the cache (begin, build, end). */
async function run<T>(cache: DesiredCache, build: (run: DesiredCacheRun) => Promise<T>) {
  const r = cache.beginRun();
  try {
    return { result: await build(r), hits: { ...r.hits }, misses: { ...r.misses } };
  } finally {
    r.end();
  }
}

const data = (o: OpenshiftResource) => (o.body as { data: Record<string, unknown> }).data;
const fresh = (o: OpenshiftResource) => new OpenshiftResource(o.body, INTEGRATION, VERSION);

describe('the desired cache of loop mode', () => {
  it('builds an unchanged file once, hands out a fresh copy each run, with the same sha', async () => {
    const w = world();
    const cache = new DesiredCache();
    const r = resource('/cm.yml', configMap('a'));
    const first = await run(cache, (c) => buildDesired(sel(), r, providerContext(w, c)));
    const second = await run(cache, (c) => buildDesired(sel(), r, providerContext(w, c)));
    expect(first.misses.objects).toBe(1);
    expect(second.hits.objects).toBe(1);
    expect(second.misses.objects).toBe(0);
    expect(second.result).not.toBe(first.result);
    expect(second.result.body).toEqual(first.result.body);
    // Shared between runs, hence frozen: a change fails where it is made, it never goes stale.
    expect(() => {
      (second.result.body as { data: Record<string, string> }).data.value = 'changed';
    }).toThrow(TypeError);
    expect(second.result.sha256sum()).toBe(fresh(second.result).sha256sum());
    expect(second.result.errorDetails).toBe('/cm.yml');
  });

  it('a file edited between runs is built again; the other files come from the cache', async () => {
    const w = world();
    const cache = new DesiredCache();
    const build = (c: DesiredCacheRun, a: string) =>
      Promise.all([
        buildDesired(sel(), resource('/a.yml', configMap(a)), providerContext(w, c)),
        buildDesired(
          sel(),
          resource('/b.yml', configMap('b').replace('settings', 'other')),
          providerContext(w, c),
        ),
      ]);
    await run(cache, (c) => build(c, 'before'));
    const edited = await run(cache, (c) => build(c, 'after'));
    expect(data(edited.result[0])).toEqual({ value: 'after' });
    expect(edited.result[0].sha256sum()).toBe(fresh(edited.result[0]).sha256sum());
    expect(edited.hits.objects).toBe(1);
    expect(edited.misses.objects).toBe(1);
  });

  it('a body its caller changes afterwards (routes) is a copy of its own', async () => {
    const w = world();
    const cache = new DesiredCache();
    const route = {
      provider: 'route',
      path: {
        path: '/route.yml',
        content: 'apiVersion: v1\nkind: Route\nmetadata:\n  name: r\nspec:\n  host: a.example\n',
      },
    } as unknown as OpenshiftResourceData;
    for (let i = 0; i < 2; i++) {
      const { result } = await run(cache, (c) => buildDesired(sel(), route, providerContext(w, c)));
      const spec = (result.body as { spec: Record<string, unknown> }).spec;
      expect(spec.tls).toBeUndefined();
      spec.tls = { termination: 'edge' };
      expect(result.sha256sum()).toBe(fresh(result).sha256sum());
    }
  });

  it('a changed bundle sha keeps content-addressed objects (same content, same object)', async () => {
    const w = world();
    const cache = new DesiredCache();
    const r = resource('/cm.yml', configMap('a'));
    await run(cache, (c) => buildDesired(sel(), r, providerContext(w, c, 'bundle-1')));
    const next = await run(cache, (c) => buildDesired(sel(), r, providerContext(w, c, 'bundle-2')));
    expect(next.hits.objects).toBe(1);
    expect(data(next.result)).toEqual({ value: 'a' });
  });

  it('what the engine changes in a handed-out object never reaches the cache or its sha', async () => {
    const w = world();
    const cache = new DesiredCache();
    const r = resource('/deploy.yml', deployment);
    const first = await run(cache, (c) => buildDesired(sel(), r, providerContext(w, c)));
    const pristineSha = first.result.sha256sum();
    // The cluster's pod template carries a restart annotation: the engine copies it into desired.
    const current = new OpenshiftResource(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'app' },
        spec: {
          template: {
            metadata: {
              annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-25T00:00:00Z' },
            },
          },
        },
      },
      INTEGRATION,
      VERSION,
    );
    const second = await run(cache, (c) => buildDesired(sel(), r, providerContext(w, c)));
    // Workloads are handed out shared too; the engine's change goes to a copy of its own.
    const shared = second.result.body;
    expect(Object.isFrozen(shared)).toBe(true);
    const patched = withRecycleAnnotations(second.result, current);
    expect(patched.body).not.toBe(shared);
    expect(second.result.body).toBe(shared);
    expect(Object.isFrozen(patched.body)).toBe(false);
    expect(patched.sha256sum()).toBe(fresh(patched).sha256sum());
    expect(patched.sha256sum()).not.toBe(pristineSha);
    expect(second.result.sha256sum()).toBe(pristineSha);
    const third = await run(cache, (c) => buildDesired(sel(), r, providerContext(w, c)));
    expect(third.hits.objects).toBe(1);
    expect(third.result.sha256sum()).toBe(pristineSha);
    const template = (third.result.body as PyObject).spec as { template: PyObject };
    expect(template.template.metadata).toBeUndefined();
  });

  it('keeps only what the last run used', async () => {
    const w = world();
    const cache = new DesiredCache();
    await run(cache, (c) =>
      Promise.all(
        ['a', 'b', 'c'].map((n) =>
          buildDesired(
            sel(),
            resource(`/${n}.yml`, configMap(n).replace('settings', n)),
            providerContext(w, c),
          ),
        ),
      ),
    );
    expect(cache.size.objects).toBe(3);
    await run(cache, (c) =>
      buildDesired(
        sel(),
        resource('/a.yml', configMap('a').replace('settings', 'a')),
        providerContext(w, c),
      ),
    );
    expect(cache.size.objects).toBe(1);
  });

  it('runs that overlap (shards of one process) keep what either used, until a later run drops it', async () => {
    const w = world();
    const cache = new DesiredCache();
    const file = (n: string) => resource(`/${n}.yml`, configMap(n).replace('settings', n));
    const shardA = cache.beginRun();
    const shardB = cache.beginRun();
    await buildDesired(sel(), file('a'), providerContext(w, shardA));
    await buildDesired(sel(), file('b'), providerContext(w, shardB));
    shardA.end();
    expect(cache.size.objects).toBe(2);
    shardB.end();
    expect(cache.size.objects).toBe(2);
    const next = await run(cache, (c) => buildDesired(sel(), file('a'), providerContext(w, c)));
    expect(next.hits.objects).toBe(1);
    expect(cache.size.objects).toBe(1);
  });

  it('the same content at several paths is one entry per path, each found again', async () => {
    const w = world();
    const cache = new DesiredCache();
    const paths = ['/a.yml', '/b.yml', '/c.yml'];
    const build = (c: DesiredCacheRun) =>
      Promise.all(
        paths.map((p) => buildDesired(sel(), resource(p, configMap('x')), providerContext(w, c))),
      );
    const first = await run(cache, build);
    expect(first.misses.objects).toBe(3);
    expect(cache.size.objects).toBe(3);
    const second = await run(cache, build);
    expect(second.hits.objects).toBe(3);
    expect(second.result.map((o) => o.errorDetails)).toEqual(paths);
    // Down to one path: the others are dropped, the one left is still found.
    await run(cache, (c) =>
      buildDesired(sel(), resource('/b.yml', configMap('x')), providerContext(w, c)),
    );
    expect(cache.size.objects).toBe(1);
    const last = await run(cache, (c) =>
      buildDesired(sel(), resource('/b.yml', configMap('x')), providerContext(w, c)),
    );
    expect(last.hits.objects).toBe(1);
    expect(last.result.errorDetails).toBe('/b.yml');
  });

  it("takes a worker's body and sha, except where the build changes the body", async () => {
    const w = world();
    const cm = resource('/cm.yml', configMap('a'));
    const rule = resource(
      '/rule.yml',
      'apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: r\nspec:\n  groups:\n  - name: g\n    rules:\n    - alert: Down\n      expr: up == 0\n      annotations:\n        summary: down\n',
    );
    const texts = [cm, rule].map(
      (r) => (r as unknown as { path: { content: string } }).path.content,
    );

    // The sha a worker says is the one the object keeps, unless the build changes the body.
    let decoded = 0;
    const said: LoadedTexts = {
      get: async (text) => ({
        body: () => {
          decoded++;
          return parseResource(text) as PyObject;
        },
        sha256sum: 'from-worker',
      }),
      counts: { loaded: 2, left: 0 },
      close: () => {},
    };
    const told = await run(new DesiredCache(), async (c) => ({
      cm: await buildDesired(sel(), cm, { ...providerContext(w, c), loaded: said }),
      // The same file and path again: the cache answers, nothing is decoded.
      again: await buildDesired(sel(), cm, { ...providerContext(w, c), loaded: said }),
      rule: await buildDesired(sel(), rule, { ...providerContext(w, c), loaded: said }),
    }));
    expect(decoded).toBe(2);
    expect(told.result.cm.sha256sum()).toBe('from-worker');
    expect(told.result.again.sha256sum()).toBe('from-worker');
    expect(told.result.rule.sha256sum()).toBe(fresh(told.result.rule).sha256sum());

    // Real workers: the same bodies and shas as the calling thread's.
    const pool = loadInWorkers(texts, 1);
    try {
      const here = await run(new DesiredCache(), async (c) =>
        Promise.all([cm, rule].map((r) => buildDesired(sel(), r, providerContext(w, c)))),
      );
      const workers = await run(new DesiredCache(), async (c) =>
        Promise.all(
          [cm, rule].map((r) => buildDesired(sel(), r, { ...providerContext(w, c), loaded: pool })),
        ),
      );
      expect(pool.counts).toEqual({ loaded: 2, left: 0 });
      workers.result.forEach((o, i) => {
        expect(o.body).toEqual(here.result[i]!.body);
        expect(o.sha256sum()).toBe(here.result[i]!.sha256sum());
        expect(o.sha256sum()).toBe(fresh(o).sha256sum());
      });
      // The rule got its html_url annotations after the worker loaded it.
      expect(JSON.stringify(workers.result[1]!.body)).toContain('/blob/master/resources/rule.yml');
    } finally {
      pool.close();
    }
  });

  it('a broken file is not kept: it fails the same way on every run', async () => {
    const w = world();
    const cache = new DesiredCache();
    const r = resource('/bad.yml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n');
    for (let i = 0; i < 2; i++) {
      await expect(
        run(cache, (c) => buildDesired(sel(), r, providerContext(w, c))),
      ).rejects.toThrow();
    }
    expect(cache.size.objects).toBe(0);
  });

  it('names the variants of its own objects only: the names go with the cache (the loop), a new one starts with none', async () => {
    const w = world();
    const r = resource('/cm.yml', configMap('a'));
    // Two variants: the same file built for two integrations.
    const build = (c: DesiredCacheRun) =>
      Promise.all([
        buildDesired(sel(), r, providerContext(w, c)),
        buildDesired(sel(), r, { ...providerContext(w, c), integration: 'other' }),
      ]);
    const loop = new DesiredCache();
    for (let i = 0; i < 3; i++) await run(loop, build);
    expect(loop.size).toEqual({ objects: 2, templates: 0, variants: 2 });
    // Another loop's cache: the names of the first are not in it, its objects are found again.
    const next = new DesiredCache();
    expect(next.size.variants).toBe(0);
    await run(next, (c) => buildDesired(sel(), r, providerContext(w, c)));
    const again = await run(next, (c) => buildDesired(sel(), r, providerContext(w, c)));
    expect(again.hits.objects).toBe(1);
    expect(next.size).toEqual({ objects: 1, templates: 0, variants: 1 });
  });

  describe('templates', () => {
    const body =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  password: "{{ vault(\'app/db\', \'password\') }}"\n  greeting: "{{ query(\'/shared/greeting.gql\')[0].text }}"\n  size: "{{ size }}"\n';
    const t = (variables = '{"size": 1}') => template('/settings.yml.j2', body, variables);

    it('an unchanged template is not rendered again, but its Vault secret is read again', async () => {
      const w = world();
      const cache = new DesiredCache();
      const first = await run(cache, (c) => buildDesired(sel(), t(), providerContext(w, c)));
      expect(data(first.result)).toEqual({ password: 'one', greeting: '{ hello }', size: '1' });
      const before = { ...w.calls };
      const second = await run(cache, (c) => buildDesired(sel(), t(), providerContext(w, c)));
      expect(w.calls.renders).toBe(before.renders);
      expect(w.calls.vault).toBe(before.vault + 1);
      // Same bundle: the file it includes is the same, not read again.
      expect(w.calls.resource).toBe(before.resource);
      expect(second.hits).toEqual({ objects: 1, templates: 1 });
      expect(data(second.result)).toEqual(data(first.result));
    });

    it('a changed Vault secret renders again', async () => {
      const w = world();
      const cache = new DesiredCache();
      await run(cache, (c) => buildDesired(sel(), t(), providerContext(w, c)));
      w.vault.set('app/db', { password: 'two' });
      const next = await run(cache, (c) => buildDesired(sel(), t(), providerContext(w, c)));
      expect(data(next.result).password).toBe('two');
      expect(next.misses.templates).toBe(1);
    });

    it('a secret that disappears fails the run instead of serving the old output', async () => {
      const w = world();
      const cache = new DesiredCache();
      await run(cache, (c) => buildDesired(sel(), t(), providerContext(w, c)));
      w.vault.delete('app/db');
      await expect(
        run(cache, (c) => buildDesired(sel(), t(), providerContext(w, c))),
      ).rejects.toThrow(/secret/);
    });

    it('changed variables render again', async () => {
      const w = world();
      const cache = new DesiredCache();
      await run(cache, (c) => buildDesired(sel(), t('{"size": 1}'), providerContext(w, c)));
      const next = await run(cache, (c) =>
        buildDesired(sel(), t('{"size": 2}'), providerContext(w, c)),
      );
      expect(data(next.result).size).toBe('2');
    });

    it('a changed namespace (what the template sees as resource.namespace) renders again', async () => {
      const w = world();
      const cache = new DesiredCache();
      await run(cache, (c) => buildDesired(sel('a'), t(), providerContext(w, c)));
      const next = await run(cache, (c) => buildDesired(sel('b'), t(), providerContext(w, c)));
      expect(next.misses.templates).toBe(1);
    });

    it('an included file changed in a new bundle renders again', async () => {
      const w = world();
      const cache = new DesiredCache();
      await run(cache, (c) => buildDesired(sel(), t(), providerContext(w, c, 'bundle-1')));
      w.files.set('/shared/greeting.gql', '{ bonjour }');
      const next = await run(cache, (c) =>
        buildDesired(sel(), t(), providerContext(w, c, 'bundle-2')),
      );
      expect(data(next.result).greeting).toBe('{ bonjour }');
      // A new bundle where the included file did not change: asked again, then reused.
      const before = w.calls.renders;
      const again = await run(cache, (c) =>
        buildDesired(sel(), t(), providerContext(w, c, 'bundle-3')),
      );
      expect(w.calls.renders).toBe(before);
      expect(again.hits.templates).toBe(1);
    });

    it('a template that reads the clock is rendered on every run', async () => {
      const w = world();
      const cache = new DesiredCache();
      const dated = template(
        '/dated.yml.j2',
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dated\ndata:\n  day: "{{ yesterday() }}"\n',
      );
      await run(cache, (c) => buildDesired(sel(), dated, providerContext(w, c)));
      const before = w.calls.renders;
      await run(cache, (c) => buildDesired(sel(), dated, providerContext(w, c)));
      expect(w.calls.renders).toBe(before + 1);
    });
  });
});
