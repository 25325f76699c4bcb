import type { ServerResponse } from 'node:http';
import { type ResourceType, resourceKey } from './catalogue.ts';
import type { FakeCluster } from './cluster.ts';
import type { HandlerContext, Outcome } from './handler-context.ts';
import { isObject, type JsonObject, metadataOf } from './json.ts';
import { badRequest, methodNotAllowed } from './status.ts';

/**
 * The `pods/log` subresource: what the kubelet would have written for each
 * container, kept here because nothing runs the pods. Tests append lines and
 * end containers; a `follow=true` request streams what is appended until its
 * container ends, as the kubelet's does.
 */

interface LogLine {
  readonly time: Date;
  readonly text: string;
}

interface ContainerLog {
  readonly lines: LogLine[];
  ended: boolean;
  /** Open `follow` requests, told of each new line and of the end. */
  readonly followers: Set<(line: LogLine | undefined) => void>;
}

export class PodLogs {
  readonly #logs = new Map<string, ContainerLog>();

  #of(namespace: string, pod: string, container: string): ContainerLog {
    const key = `${namespace}/${pod}/${container}`;
    let log = this.#logs.get(key);
    if (!log) {
      log = { lines: [], ended: false, followers: new Set() };
      this.#logs.set(key, log);
    }
    return log;
  }

  /** Adds lines (a string is split at its newlines) to a container's log. */
  append(namespace: string, pod: string, container: string, text: string | readonly string[]) {
    const log = this.#of(namespace, pod, container);
    const lines = typeof text === 'string' ? text.replace(/\n$/, '').split('\n') : text;
    for (const t of lines) {
      const line = { time: new Date(), text: t };
      log.lines.push(line);
      for (const f of log.followers) f(line);
    }
  }

  /** The container exited: its followers' answers end. */
  end(namespace: string, pod: string, container: string): void {
    const log = this.#of(namespace, pod, container);
    log.ended = true;
    for (const f of log.followers) f(undefined);
    log.followers.clear();
  }

  read(namespace: string, pod: string, container: string): ContainerLog {
    return this.#of(namespace, pod, container);
  }
}

/** The core Pod type, which serves `pods/log`. */
export function isPods(type: Pick<ResourceType, 'builtin' | 'group' | 'plural'>): boolean {
  return type.builtin && type.group === '' && type.plural === 'pods';
}

type ContainerType = 'initContainers' | 'containers' | 'ephemeralContainers';
const CONTAINER_TYPES: readonly ContainerType[] = [
  'initContainers',
  'containers',
  'ephemeralContainers',
];
const STATUS_FIELD: Record<ContainerType, string> = {
  initContainers: 'initContainerStatuses',
  containers: 'containerStatuses',
  ephemeralContainers: 'ephemeralContainerStatuses',
};

function namesOf(pod: JsonObject, type: ContainerType): string[] {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const list = Array.isArray(spec[type]) ? spec[type] : [];
  return list.filter(isObject).map((c) => String(c.name ?? ''));
}

function containerStatus(pod: JsonObject, container: string): JsonObject | undefined {
  const status = isObject(pod.status) ? pod.status : {};
  for (const type of CONTAINER_TYPES) {
    const list = status[STATUS_FIELD[type]];
    if (!Array.isArray(list)) continue;
    const found = list.find((s) => isObject(s) && s.name === container);
    if (isObject(found)) return found;
  }
  return undefined;
}

function phaseOf(pod: JsonObject): string {
  const status = isObject(pod.status) ? pod.status : {};
  return typeof status.phase === 'string' ? status.phase : 'Pending';
}

/** apiserver's `ValidateContainer`: the only container by default, else the name must be given and known. */
function chooseContainer(pod: JsonObject, podName: string, asked: string): string {
  const all = CONTAINER_TYPES.flatMap((t) => namesOf(pod, t));
  if (asked !== '') {
    if (!all.includes(asked))
      throw badRequest(`container ${asked} is not valid for pod ${podName}`);
    return asked;
  }
  const containers = namesOf(pod, 'containers');
  if (containers.length === 1) return containers[0] ?? '';
  if (containers.length === 0) {
    throw badRequest(`a container name must be specified for pod ${podName}`);
  }
  // Go's %s of a []string.
  throw badRequest(
    `a container name must be specified for pod ${podName}, choose one of: [${all.join(' ')}]`,
  );
}

/** Whether the container has exited, by the fake's log or by the pod's status (a seeded finished pod). */
function hasEnded(pod: JsonObject, container: string, log: ContainerLog): boolean {
  if (log.ended) return true;
  const phase = phaseOf(pod);
  if (phase === 'Succeeded' || phase === 'Failed') return true;
  const state = containerStatus(pod, container)?.state;
  return isObject(state) && isObject(state.terminated);
}

/** The kubelet's refusal of a container that has not started; undefined when it has logs to read. */
function notStarted(pod: JsonObject, podName: string, container: string): string | undefined {
  const state = containerStatus(pod, container)?.state;
  if (isObject(state)) {
    if (isObject(state.waiting)) {
      const reason = typeof state.waiting.reason === 'string' ? state.waiting.reason : '';
      return `container "${container}" in pod "${podName}" is waiting to start: ${reason}`;
    }
    return undefined;
  }
  if (phaseOf(pod) === 'Pending') {
    return `container "${container}" in pod "${podName}" is waiting to start: ContainerCreating`;
  }
  return undefined;
}

/** Go's RFC3339Nano as the kubelet prefixes lines with `timestamps=true` (trailing zeros trimmed). */
function rfc3339Nano(time: Date): string {
  return time.toISOString().replace(/\.?0*Z$/, 'Z');
}

function intParam(query: URLSearchParams, name: string): number | undefined {
  const text = query.get(name);
  if (text === null || text === '') return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n)) {
    throw badRequest(`${name}: Invalid value: "${text}": must be an integer`);
  }
  return n;
}

/**
 * `GET /api/v1/namespaces/{ns}/pods/{name}/log` with `container`, `follow`,
 * `previous`, `sinceSeconds`, `sinceTime`, `timestamps`, `tailLines` and
 * `limitBytes`: the container's lines as `text/plain`. A follow request of a
 * running container stays open and gets each appended line until the container
 * ends (or the client goes away).
 */
export function handlePodLog(ctx: HandlerContext): Outcome {
  const { cluster, req, res, route, query } = ctx;
  if (req.method !== 'GET') throw methodNotAllowed();
  const podType = cluster.findType('', 'v1', 'pods');
  if (!podType) throw methodNotAllowed();
  const pod = cluster.get(podType, route.namespace, route.name);
  const podName = String(metadataOf(pod).name ?? route.name);
  const container = chooseContainer(pod, podName, query.get('container') ?? '');
  if (query.get('previous') === 'true') {
    throw badRequest(`previous terminated container "${container}" in pod "${podName}" not found`);
  }
  const waiting = notStarted(pod, podName, container);
  if (waiting) throw badRequest(waiting);
  const tailLines = intParam(query, 'tailLines');
  let limitBytes = intParam(query, 'limitBytes');
  const sinceSeconds = intParam(query, 'sinceSeconds');
  const sinceTimeText = query.get('sinceTime');
  const since =
    sinceSeconds !== undefined
      ? Date.now() - sinceSeconds * 1000
      : sinceTimeText
        ? Date.parse(sinceTimeText)
        : undefined;
  const timestamps = query.get('timestamps') === 'true';
  const follow = query.get('follow') === 'true';

  const log = cluster.podLogs.read(route.namespace, podName, container);
  let lines = log.lines.filter((l) => since === undefined || l.time.getTime() >= since);
  if (tailLines !== undefined && tailLines >= 0) {
    lines = tailLines === 0 ? [] : lines.slice(-tailLines);
  }

  res.writeHead(200, { 'Content-Type': 'text/plain' });
  // Sent at once, as the real server's stream: a client waits for them before any line comes.
  res.flushHeaders();
  // Written line by line as the kubelet's copy does; `limitBytes` cuts the answer there.
  const write = (line: LogLine): boolean => {
    const bytes = Buffer.from(`${timestamps ? `${rfc3339Nano(line.time)} ` : ''}${line.text}\n`);
    if (limitBytes !== undefined) {
      if (bytes.length >= limitBytes) {
        res.end(bytes.subarray(0, limitBytes));
        return false;
      }
      limitBytes -= bytes.length;
    }
    res.write(bytes);
    return true;
  };
  for (const line of lines) if (!write(line)) return { status: 200, kind: 'Pod', dryRun: false };
  if (!follow || hasEnded(pod, container, log)) {
    res.end();
    return { status: 200, kind: 'Pod', dryRun: false };
  }
  followLog(ctx.watches, res, log, write);
  return { status: 200, kind: 'Pod', dryRun: false };
}

function followLog(
  open: Set<ServerResponse>,
  res: ServerResponse,
  log: ContainerLog,
  write: (line: LogLine) => boolean,
): void {
  // Kept with the watches: the server's close (or the cluster going down) ends it.
  open.add(res);
  const follower = (line: LogLine | undefined) => {
    if (line === undefined) {
      res.end();
      stop();
    } else if (!write(line)) stop();
  };
  const stop = () => {
    log.followers.delete(follower);
    open.delete(res);
  };
  log.followers.add(follower);
  res.on('close', stop);
}

/**
 * Ends a container as the kubelet reports it: its follow requests end, its
 * status becomes `terminated`, and the pod's phase `Succeeded` (or `Failed`
 * when one exited non-zero) once every container has ended.
 */
export function endContainer(
  cluster: FakeCluster,
  namespace: string,
  podName: string,
  container: string,
  exitCode: number,
): void {
  cluster.podLogs.end(namespace, podName, container);
  const podType = cluster.findType('', 'v1', 'pods');
  if (!podType) return;
  const pod = cluster.store.read(resourceKey(podType), namespace, podName);
  if (!pod) return;
  const status = isObject(pod.status) ? pod.status : {};
  const patch: JsonObject = {};
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const terminated = {
    terminated: {
      exitCode,
      reason: exitCode === 0 ? 'Completed' : 'Error',
      finishedAt: now,
    },
  };
  let allEnded = true;
  let anyFailed = exitCode !== 0;
  for (const type of CONTAINER_TYPES) {
    const names = namesOf(pod, type);
    if (names.length === 0) continue;
    const field = STATUS_FIELD[type];
    const old = Array.isArray(status[field]) ? status[field].filter(isObject) : [];
    const next = names.map((name) => {
      const previous = old.find((s) => s.name === name) ?? { name };
      if (name === container) return { ...previous, name, ready: false, state: terminated };
      return previous;
    });
    patch[field] = next;
    if (type !== 'containers') continue;
    for (const s of next) {
      const state = isObject(s.state) ? s.state : {};
      if (!isObject(state.terminated)) allEnded = false;
      else if (state.terminated.exitCode !== 0) anyFailed = true;
    }
  }
  if (allEnded) patch.phase = anyFailed ? 'Failed' : 'Succeeded';
  cluster.patch(
    podType,
    'v1',
    namespace,
    podName,
    'application/merge-patch+json',
    { status: patch },
    { dryRun: false, fieldManager: 'kubelet' },
    'status',
  );
}
