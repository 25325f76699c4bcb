// Rough render timings (not a test): node tools/bench-render.ts
import { performance } from 'node:perf_hooks';
import { renderTemplate } from '../src/index.ts';

const TEMPLATE = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ resource.namespace.name }}-config
  labels:
{% for k, v in (resource.namespace.labels|json_to_dict).items()|sort %}
    {{ k }}: {{ v|tojson }}
{% endfor %}
data:
  cluster: {{ resource.namespace.cluster.name }}
{% for item in items if item.enabled %}
  {{ item.name|lower|replace('_', '-') }}.yaml: |
    replicas: {{ item.replicas|default(1) }}
    image: "{{ '%s:%s'|format(item.image, item.tag) }}"
    env: {{ item.env|dictsort|map('join', '=')|join(',') }}
{% endfor %}
`;

const items = Array.from({ length: 50 }, (_, i) => ({
  name: `Service_${i}`,
  enabled: i % 5 !== 0,
  replicas: i % 3,
  image: `quay.io/app/s${i}`,
  tag: `v${i}`,
  env: { A: `${i}`, B: 'x' },
}));
const resource = {
  namespace: {
    name: 'app-stage',
    labels: '{"team": "sre", "env": "stage"}',
    cluster: { name: 'c1' },
  },
};

async function time(label: string, runs: number, body: string, variables: Record<string, unknown>) {
  const start = performance.now();
  let size = 0;
  for (let i = 0; i < runs; i++) {
    size = (await renderTemplate(body, { type: 'jinja2', path: 'bench', variables, helpers: {} }))
      .length;
  }
  const ms = (performance.now() - start) / runs;
  process.stdout.write(`${label}: ${ms.toFixed(3)} ms/render (${size} chars out, ${runs} runs)\n`);
}

await time('first render (compile + render)', 1, `${TEMPLATE}\n{# uncached #}`, {
  resource,
  items,
});
await time('configmap, 40 items (cached compile)', 500, TEMPLATE, { resource, items });
const big = Array.from({ length: 2000 }, (_, i) => ({ ...items[i % 50]!, name: `S_${i}` }));
await time('configmap, 1600 items', 20, TEMPLATE, { resource, items: big });
await time(
  '100k loop iterations',
  3,
  '{% set ns = namespace(n=0) %}{% for i in range(100000) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}',
  {},
);
await time(
  '100k loop iterations of int arithmetic (* // % + -)',
  3,
  '{% set ns = namespace(n=1) %}{% for i in range(100000) %}{% set ns.n = (ns.n * 31 + i // 7 - i % 5) % 1000003 %}{% endfor %}{{ ns.n }}',
  {},
);
await time(
  '100k loop iterations of big int arithmetic (beyond 2^53)',
  3,
  '{% set ns = namespace(n=1) %}{% for i in range(100000) %}{% set ns.n = (ns.n * 31 + i) % (2**89 - 1) %}{% endfor %}{{ ns.n }}',
  {},
);
