import { subscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import {
  createGqlClient,
  loadEmbeddedEngine,
  type TypedDocumentNode,
} from '@qontract/app-interface';
import { configFromObject, DEFAULT_GLOBAL_OPTIONS, silentLogger } from '@qontract/core';
import { OpenshiftResource, parseResource, resourcesEqual } from '@qontract/openshift';
import { parse } from 'graphql';
import { stringify } from 'yaml';
import { type ConnectionRun, measureConnections } from './kube-client-connections.ts';
import {
  appliedObject,
  clusterName,
  desiredBody,
  namespaceName,
  RESOURCES_INTEGRATION,
  RESOURCES_INTEGRATION_VERSION,
} from './model.ts';
import { type InProcessRun, runInProcess } from './run-in-process.ts';

/** What one measured child process does. */
export type ChildTask =
  | ({ readonly kind: 'integration' } & InProcessRun)
  | ({ readonly kind: 'connections' } & ConnectionRun)
  | { readonly kind: 'compute'; readonly objects: number }
  | { readonly kind: 'embedded-load'; readonly dir: string }
  | { readonly kind: 'remote-query'; readonly url: string };

/** What the child measured about itself. */
export interface ChildMeasurement {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly peakRssBytes: number;
  readonly exitCode: number;
  readonly details: Record<string, number | string>;
}

export async function runChildTask(task: ChildTask): Promise<ChildMeasurement> {
  // Every outgoing TCP connection (API servers and GraphQL): shows whether connections are reused.
  let connections = 0;
  subscribe('net.client.socket', () => connections++);
  const phases = new RequestPhases();
  phases.subscribe();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let exitCode = 0;
  let details: Record<string, number | string> = {};
  switch (task.kind) {
    case 'integration': {
      const run = await runInProcess(task);
      exitCode = run.exitCode;
      const actions = Object.entries(run.actions).map(([name, n]) => [`actions.${name}`, n]);
      details = {
        logLines: run.logLines,
        errorLines: run.errorLines,
        ...(run.firstError ? { firstError: run.firstError } : {}),
        ...Object.fromEntries(actions),
      };
      break;
    }
    case 'connections': {
      const measured = await measureConnections(task);
      details = { requestsWallMs: measured.wallMs, requestsCpuMs: measured.cpuMs };
      break;
    }
    case 'compute':
      details = measureCompute(task.objects);
      break;
    case 'embedded-load': {
      const engine = await loadEmbeddedEngine(task.dir);
      const loadedMs = performance.now() - started;
      const result = await engine.execute(RESOURCES_QUERY_TEXT);
      const namespaces = (result.data?.namespaces as unknown[] | undefined)?.length ?? 0;
      if (result.errors?.length) throw new Error(result.errors[0]?.message);
      details = { loadMs: Math.round(loadedMs), namespaces };
      break;
    }
    case 'remote-query': {
      const config = configFromObject({ graphql: { server: task.url } });
      const client = await createGqlClient(
        config,
        { ...DEFAULT_GLOBAL_OPTIONS, validateSchemas: false, gqlUrlPrint: false },
        undefined,
        silentLogger(),
      );
      const { namespaces } = await client.query(RESOURCES_QUERY, undefined, {
        skipValidation: true,
      });
      await client.close();
      details = { namespaces: namespaces?.length ?? 0 };
      break;
    }
  }
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakRssBytes: peakRss(),
    exitCode,
    details: { ...details, connections, ...phases.relativeTo(started) },
  };
}

/**
 * When the run talked to the API servers (https, Node's HTTP client) and to
 * GraphQL (http, `fetch`), from the diagnostics channels both publish: how
 * much of the wall time is the API phase.
 */
class RequestPhases {
  #firstApiStart = Number.POSITIVE_INFINITY;
  #lastApiEnd = 0;
  #graphqlMs = 0;
  readonly #started = new WeakMap<object, number>();

  subscribe(): void {
    subscribe('http.client.request.start', () => {
      this.#firstApiStart = Math.min(this.#firstApiStart, performance.now());
    });
    subscribe('http.client.response.finish', (message) => {
      const { response } = message as { response: IncomingMessage };
      response.once('end', () => {
        this.#lastApiEnd = performance.now();
      });
    });
    subscribe('undici:request:create', (message) => {
      this.#started.set((message as { request: object }).request, performance.now());
    });
    subscribe('undici:request:trailers', (message) => {
      const { request } = message as { request: object };
      const now = performance.now();
      this.#graphqlMs += now - (this.#started.get(request) ?? now);
    });
  }

  relativeTo(start: number): Record<string, number> {
    if (this.#lastApiEnd === 0) return { graphqlMs: this.#graphqlMs };
    return {
      graphqlMs: this.#graphqlMs,
      beforeApiMs: this.#firstApiStart - start,
      apiPhaseMs: this.#lastApiEnd - this.#firstApiStart,
      afterApiMs: performance.now() - this.#lastApiEnd,
    };
  }
}

/** VmHWM (the kernel's peak resident set) where /proc exists, else resourceUsage's maxRSS. */
function peakRss(): number {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}

// The openshift-resources selection of the namespaces document (what the query must resolve).
const RESOURCES_QUERY_TEXT = `
  query BenchResources {
    namespaces: namespaces_v1 {
      name
      managedResourceTypes
      cluster { name serverUrl automationToken { path field } }
      openshiftResources {
        provider
        ... on NamespaceOpenshiftResourceResource_v1 { resource: path { path content sha256sum } }
      }
    }
  }
`;
const RESOURCES_QUERY = parse(RESOURCES_QUERY_TEXT) as TypedDocumentNode<
  { namespaces: unknown[] | null },
  Record<string, never>
>;

/**
 * The per-object hot path of a steady-state run on one core: canonicalise +
 * sha256 of the desired object, then the three-way compare against the
 * cluster's copy (which hashes and normalises again). Objects are the
 * generator's mix of ConfigMaps, Secrets and Deployments.
 */
function measureCompute(count: number): Record<string, number> {
  const pairs: Array<[OpenshiftResource, OpenshiftResource]> = [];
  for (let i = 0; i < count; i++) {
    const cluster = clusterName(i % 20);
    const namespace = namespaceName(i % 50);
    const body = desiredBody(cluster, namespace, i);
    const current = appliedObject(body, namespace);
    pairs.push([
      new OpenshiftResource(body, RESOURCES_INTEGRATION, RESOURCES_INTEGRATION_VERSION),
      new OpenshiftResource(current, RESOURCES_INTEGRATION, RESOURCES_INTEGRATION_VERSION, {
        validate: false,
      }),
    ]);
  }
  const pass = (n: number) => {
    let unequal = 0;
    for (let i = 0; i < n; i++) {
      const [desired, current] = pairs[i]!;
      desired.sha256sum();
      if (!resourcesEqual(current, desired)) unequal++;
    }
    return unequal;
  };
  pass(Math.min(2000, count)); // warm-up: let the JIT settle before timing
  const unequal = cpuSecondsOf(() => pass(count));
  if (unequal.result > 0) throw new Error(`${unequal.result} in-sync pairs compared unequal`);

  // What openshift-resources does first with every resource file: parse its YAML.
  // A sample is enough for a rate, and writing the YAML is not what is measured.
  const yamlCount = Math.min(count, 20_000);
  const texts = pairs
    .slice(0, yamlCount)
    .map(([d]) => `---\n${stringify(d.body, { lineWidth: 0 })}`);
  const parseAll = (n: number) => {
    for (let i = 0; i < n; i++) parseResource(texts[i]!);
  };
  parseAll(Math.min(2000, count));
  const parsed = cpuSecondsOf(() => parseAll(yamlCount));
  return {
    objects: count,
    objectsPerSecond: Math.round(count / unequal.seconds),
    yamlObjectsPerSecond: Math.round(yamlCount / parsed.seconds),
  };
}

function cpuSecondsOf<T>(fn: () => T): { result: T; seconds: number } {
  const before = process.cpuUsage();
  const result = fn();
  const used = process.cpuUsage(before);
  return { result, seconds: (used.user + used.system) / 1e6 };
}
