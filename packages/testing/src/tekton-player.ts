/**
 * Tekton, played by a test or the demo: the fake API server stores Pipelines,
 * Tasks and PipelineRuns but runs nothing. `tektonCommands` reads what a real
 * Tekton controller would run for a PipelineRun — each task of its Pipeline,
 * the task's `qontract-reconcile` step, its `$(params.*)` resolved from the
 * Pipeline's task parameters, themselves resolved from the PipelineRun's — so
 * the caller runs exactly that command line with the real CLI. Only what
 * openshift-tekton-resources' templates use is resolved (string params, `sh
 * -c` steps); anything else is an error naming the object, never a guess.
 */

type Obj = Record<string, unknown>;

/** Reads one object of the provider namespace (the fake API server's `get` bound to a cluster). */
export type TektonObjectReader = (kind: 'Pipeline' | 'Task', name: string) => Obj | undefined;

export interface TektonCommand {
  /** The Pipeline task it comes from. */
  readonly task: string;
  /** The step's command line after `qontract-reconcile`, `--config FILE` left out. */
  readonly argv: readonly string[];
}

const PARAM = /\$\(params\.([A-Za-z0-9_-]+)\)/g;

function params(list: unknown): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of (list as Array<{ name: string; value: unknown }> | undefined) ?? []) {
    if (typeof p.value === 'string') out.set(p.name, p.value);
  }
  return out;
}

function resolve(text: string, values: ReadonlyMap<string, string>, where: string): string {
  return text.replace(PARAM, (_, name: string) => {
    const value = values.get(name);
    if (value === undefined) throw new Error(`${where}: no value for $(params.${name})`);
    return value;
  });
}

/** The `qontract-reconcile` command lines a PipelineRun's `tasks` (not `finally`) would run, in order. */
export function tektonCommands(
  pipelineRun: { readonly metadata: { readonly name: string }; readonly spec: object },
  read: TektonObjectReader,
): TektonCommand[] {
  const runName = pipelineRun.metadata.name;
  const spec = pipelineRun.spec as { pipelineRef?: { name?: string }; params?: unknown };
  const pipelineName = spec.pipelineRef?.name ?? '';
  const pipeline = read('Pipeline', pipelineName);
  if (!pipeline) throw new Error(`PipelineRun ${runName}: Pipeline ${pipelineName} not found`);
  const runParams = params(spec.params);
  const commands: TektonCommand[] = [];
  const tasks = ((pipeline.spec as Obj).tasks ?? []) as Array<{
    name: string;
    taskRef: { name: string };
    params?: unknown;
  }>;
  for (const t of tasks) {
    const task = read('Task', t.taskRef.name);
    if (!task) throw new Error(`Pipeline ${pipelineName}: Task ${t.taskRef.name} not found`);
    const taskParams = new Map(
      [...params(t.params)].map(([k, v]) => [k, resolve(v, runParams, `Pipeline ${pipelineName}`)]),
    );
    const steps = ((task.spec as Obj).steps ?? []) as Array<{ name: string; args?: string[] }>;
    for (const step of steps) {
      const line = (step.args ?? []).join(' ');
      if (!/^\s*qontract-reconcile\s/.test(line)) continue;
      const words = resolve(line, taskParams, `Task ${t.taskRef.name}`)
        .trim()
        .split(/\s+/)
        .slice(1);
      const config = words.indexOf('--config');
      if (config >= 0) words.splice(config, 2);
      commands.push({ task: t.name, argv: words });
    }
  }
  return commands;
}

/** What a player reads of the fake API server (its `list` and `get`). */
interface TektonServer {
  list(cluster: string, apiVersion: string, kind: string, namespace?: string): object[];
  get(
    cluster: string,
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
  ): object | undefined;
}

/** A PipelineRun as a player hands it out. */
export interface PlayedRun {
  readonly metadata: {
    readonly name: string;
    readonly resourceVersion?: string;
    readonly labels?: Record<string, string>;
  };
  readonly spec: object;
}

/**
 * Tekton for a provider namespace of the fake API server: each call of
 * `next` hands out the PipelineRuns created since the last one, in the order
 * they were created (stage's deploy publishes before production's gate
 * reads), each with the commands its Pipeline would run.
 */
export class TektonPlayer {
  readonly #played = new Set<string>();
  readonly #server: TektonServer;
  readonly #where: { readonly cluster: string; readonly namespace: string };

  constructor(
    server: TektonServer,
    where: { readonly cluster: string; readonly namespace: string },
  ) {
    this.#server = server;
    this.#where = where;
  }

  next(): Array<{ readonly pipelineRun: PlayedRun; readonly commands: TektonCommand[] }> {
    const { cluster, namespace } = this.#where;
    const read = (kind: 'Pipeline' | 'Task', name: string) =>
      this.#server.get(cluster, 'tekton.dev/v1', kind, namespace, name) as Obj | undefined;
    return (this.#server.list(cluster, 'tekton.dev/v1', 'PipelineRun', namespace) as PlayedRun[])
      .filter((r) => !this.#played.has(r.metadata.name))
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))
      .map((pipelineRun) => {
        this.#played.add(pipelineRun.metadata.name);
        return { pipelineRun, commands: tektonCommands(pipelineRun, read) };
      });
  }
}
