/**
 * Planned-data validation (the original's `validate_planned_data`): before
 * anything is applied, every Secret and ConfigMap a desired Deployment or
 * DeploymentConfig needs (non-optional volumes, `envFrom`, `env.valueFrom`
 * keys) must be desired in the same namespace or exist on the cluster, and
 * hold every key it reads. A Secret also counts as desired when a desired
 * Service asks OpenShift for a serving certificate under that name.
 */

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export type UsedKind = 'Secret' | 'ConfigMap';

const REFS: Record<
  UsedKind,
  { volume: string; volumeName: string; envFrom: string; envKey: string }
> = {
  Secret: {
    volume: 'secret',
    volumeName: 'secretName',
    envFrom: 'secretRef',
    envKey: 'secretKeyRef',
  },
  ConfigMap: {
    volume: 'configMap',
    volumeName: 'name',
    envFrom: 'configMapRef',
    envKey: 'configMapKeyRef',
  },
};

/** Name → keys read, of the Secrets or ConfigMaps a pod spec needs (optional references left out). */
export function resourcesUsedInPodSpec(podSpec: unknown, kind: UsedKind): Map<string, Set<string>> {
  const refs = REFS[kind];
  const used = new Map<string, Set<string>>();
  const need = (name: unknown): Set<string> | undefined => {
    if (typeof name !== 'string') return undefined;
    const keys = used.get(name) ?? new Set<string>();
    used.set(name, keys);
    return keys;
  };
  const spec = obj(podSpec);
  for (const v of list(spec?.volumes)) {
    const ref = obj(obj(v)?.[refs.volume]);
    if (ref && !ref.optional) need(ref[refs.volumeName]);
  }
  for (const c of [...list(spec?.containers), ...list(spec?.initContainers)]) {
    for (const e of list(obj(c)?.envFrom)) {
      const ref = obj(obj(e)?.[refs.envFrom]);
      if (ref && !ref.optional) need(ref.name);
    }
    for (const e of list(obj(c)?.env)) {
      const ref = obj(obj(obj(e)?.valueFrom)?.[refs.envKey]);
      if (!ref || ref.optional) continue;
      const keys = need(ref.name);
      if (keys && typeof ref.key === 'string') keys.add(ref.key);
    }
  }
  return used;
}

const SERVING_CERT_ANNOTATIONS = [
  'service.alpha.openshift.io/serving-cert-secret-name',
  'service.beta.openshift.io/serving-cert-secret-name',
];
/** The keys OpenShift's service CA writes into a serving-cert Secret. */
const SERVING_CERT_KEYS = ['tls.crt', 'tls.key'];

/** One desired object of a namespace, as the check needs it. */
export interface PlannedObject {
  readonly kind: string;
  readonly name: string;
  readonly body: unknown;
}

/** Reads an object from the cluster when it is not desired (undefined: absent). */
export type ExistingObjectReader = (kind: UsedKind, name: string) => Promise<unknown>;

/**
 * The problems of one namespace's desired objects, each as the original
 * words it: `[cluster/ns] [Deployment/x] Secret y does not exist` or
 * `... does not contain keys: {...}`.
 */
export async function validatePlannedNamespace(
  cluster: string,
  namespace: string,
  desired: readonly PlannedObject[],
  readExisting: ExistingObjectReader,
): Promise<string[]> {
  const problems: string[] = [];
  const byKey = new Map(desired.map((d) => [`${d.kind}/${d.name}`, d.body]));
  const servingCertSecrets = new Set<string>();
  for (const d of desired) {
    if (d.kind !== 'Service') continue;
    const annotations = obj(obj(obj(d.body)?.metadata)?.annotations) ?? {};
    for (const a of SERVING_CERT_ANNOTATIONS) {
      if (typeof annotations[a] === 'string') servingCertSecrets.add(annotations[a]);
    }
  }
  for (const d of desired) {
    if (d.kind !== 'Deployment' && d.kind !== 'DeploymentConfig') continue;
    const podSpec = obj(obj(obj(d.body)?.spec)?.template)?.spec;
    for (const kind of ['Secret', 'ConfigMap'] as const) {
      for (const [name, keys] of resourcesUsedInPodSpec(podSpec, kind)) {
        const base = `[${cluster}/${namespace}] [${d.kind}/${d.name}] ${kind} ${name}`;
        let present: string[];
        const body = byKey.get(`${kind}/${name}`) ?? undefined;
        if (body !== undefined) {
          present = dataKeys(body);
        } else if (kind === 'Secret' && servingCertSecrets.has(name)) {
          // The original compares the keys with the Service's body, which has
          // none: any key read from a serving-cert Secret failed. We check the
          // keys the service CA writes instead (a fix, see the README).
          present = SERVING_CERT_KEYS;
        } else {
          const existing = await readExisting(kind, name);
          if (existing === undefined || existing === null) {
            problems.push(`${base} does not exist`);
            continue;
          }
          present = dataKeys(existing);
        }
        const missing = [...keys].filter((k) => !present.includes(k)).sort();
        if (missing.length > 0) {
          problems.push(
            `${base} does not contain keys: {${missing.map((k) => `'${k}'`).join(', ')}}`,
          );
        }
      }
    }
  }
  return problems;
}

function dataKeys(body: unknown): string[] {
  const o = obj(body);
  return [...Object.keys(obj(o?.data) ?? {}), ...Object.keys(obj(o?.stringData) ?? {})];
}
