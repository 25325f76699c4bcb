/** A container of a rendered pod spec: the fields a kubelet reads to start it here. */
export interface RenderedContainer {
  readonly name: string;
  readonly image: string;
  readonly env?: readonly RenderedEnv[];
  readonly volumeMounts?: readonly {
    readonly name: string;
    readonly mountPath: string;
    readonly readOnly?: boolean;
  }[];
}

interface KeyRef {
  readonly name: string;
  readonly key: string;
  readonly optional?: boolean;
}

interface RenderedEnv {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: {
    readonly secretKeyRef?: KeyRef;
    readonly configMapKeyRef?: KeyRef;
  };
}

/** What the cluster would provide to the pod: its Secrets, ConfigMaps and a directory per volume. */
export interface PodSources {
  readonly secrets: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly configMaps: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** The host directory standing for each volume the container mounts. */
  readonly volumes: Readonly<Record<string, string>>;
}

/**
 * The `podman run` options that give `container` the environment and mounts a
 * kubelet would: literal values, values from Secrets and ConfigMaps (a missing
 * optional one is left out, a missing required one is an error, as kubelet
 * refuses to start the container), each volume mount at its path.
 */
export function podmanOptions(container: RenderedContainer, sources: PodSources): string[] {
  const options: string[] = [];
  for (const env of container.env ?? []) {
    const value = envValue(container.name, env, sources);
    if (value !== undefined) options.push('--env', `${env.name}=${value}`);
  }
  for (const mount of container.volumeMounts ?? []) {
    const dir = sources.volumes[mount.name];
    if (dir === undefined) {
      throw new Error(`container ${container.name}: no directory for volume '${mount.name}'`);
    }
    options.push('--volume', `${dir}:${mount.mountPath}${mount.readOnly ? ':ro' : ''}`);
  }
  return options;
}

function envValue(container: string, env: RenderedEnv, sources: PodSources): string | undefined {
  if (env.value !== undefined) return env.value;
  const from = env.valueFrom;
  const [kind, ref, store] = from?.secretKeyRef
    ? (['Secret', from.secretKeyRef, sources.secrets] as const)
    : from?.configMapKeyRef
      ? (['ConfigMap', from.configMapKeyRef, sources.configMaps] as const)
      : [];
  if (!kind) return '';
  const value = store[ref.name]?.[ref.key];
  if (value === undefined && !ref.optional) {
    throw new Error(
      `container ${container}: env ${env.name} needs key '${ref.key}' of ${kind} '${ref.name}'`,
    );
  }
  return value;
}

/** The container `name` of a rendered Deployment, StatefulSet or CronJob, and its pod's grace period. */
export function containerOf(
  object: Record<string, unknown>,
  name: string,
): { container: RenderedContainer; terminationGracePeriodSeconds: number } {
  type PodSpec = { containers: RenderedContainer[]; terminationGracePeriodSeconds?: number };
  type Spec = {
    template?: { spec: PodSpec };
    jobTemplate?: { spec: { template: { spec: PodSpec } } };
  };
  const spec = object.spec as Spec;
  const pod = spec.jobTemplate?.spec.template.spec ?? spec.template?.spec;
  const container = pod?.containers.find((c) => c.name === name);
  const { kind, metadata } = object as { kind: string; metadata: { name: string } };
  if (!pod || !container) throw new Error(`${kind} ${metadata.name} has no container '${name}'`);
  // Kubernetes' default when the pod does not say.
  return { container, terminationGracePeriodSeconds: pod.terminationGracePeriodSeconds ?? 30 };
}
