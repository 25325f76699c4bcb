import { randomInt, randomUUID } from 'node:crypto';
import {
  apiVersionOf,
  KUBERNETES_TYPES,
  OPENSHIFT_TYPES,
  type ResourceType,
  resourceKey,
} from './catalogue.ts';
import { fillServiceAccountToken, syncReplicaSets, TOKEN_SECRET } from './controllers.ts';
import { clone, isObject, type JsonObject, metadataOf, stringMap } from './json.ts';
import { nowTimestamp, serverSideApply, trackUpdate, type WriteContext } from './managed-fields.ts';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, PatchType } from './patches.ts';
import { PodLogs } from './pod-logs.ts';
import {
  applyDefaults,
  readyStatus,
  specChanged,
  validateName,
  validateUpdate,
} from './semantics.ts';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  notFound,
  resourceVersionOnCreate,
  STALE_OBJECT,
} from './status.ts';
import { ObjectStore } from './store.ts';

export interface WriteOptions {
  readonly dryRun: boolean;
  /** `?fieldManager=`, or the User-Agent's product as the real server falls back to. */
  readonly fieldManager: string;
}

export interface DeleteOptions {
  readonly dryRun: boolean;
  readonly propagationPolicy?: string;
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
}

export interface ClusterSettings {
  readonly name: string;
  readonly token: string;
  readonly openshift: boolean;
  /** How long after a change the controllers act (workload roll-out, tokens); negative: never. */
  readonly workloadReadyDelayMs: number;
  /** PEM of the serving certificate, which service-account token Secrets carry as `ca.crt`. */
  readonly caCertificate?: string;
  /** How long a read waits for a resourceVersion the store has not reached yet. Default 3000. */
  readonly tooLargeResourceVersionWaitMs?: number;
}

const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

// As k8s.io/apiserver's name generator: names within 63 characters, the 5 random ones from
// k8s.io/apimachinery's util/rand alphabet (no vowels, so no words; no 0, 1 or 3).
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_GENERATED_PREFIX = 63 - 5;

/** A name from a `generateName` prefix: cut to 58 characters, then 5 random characters. */
function generatedName(prefix: string): string {
  let name = prefix.slice(0, MAX_GENERATED_PREFIX);
  for (let i = 0; i < 5; i++) name += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return name;
}

const NAMESPACES: ResourceType = KUBERNETES_TYPES.find((t) => t.plural === 'namespaces')!;
const CRDS: ResourceType = KUBERNETES_TYPES.find((t) => t.plural === 'customresourcedefinitions')!;

function rvOf(obj: JsonObject | undefined): string | undefined {
  const metadata = obj?.metadata;
  return isObject(metadata) && typeof metadata.resourceVersion === 'string'
    ? metadata.resourceVersion
    : undefined;
}

/** Puts apiVersion, kind and metadata first, as the real server's encoder does. */
function ordered(obj: JsonObject, apiVersion: string, kind: string): JsonObject {
  const { apiVersion: _a, kind: _k, metadata, ...rest } = obj;
  return { apiVersion, kind, metadata, ...rest };
}

/** One fake cluster: its types (built-in and from CRDs), its objects and their semantics. */
export class FakeCluster {
  readonly name: string;
  readonly token: string;
  readonly openshift: boolean;
  workloadReadyDelayMs: number;
  readonly caCertificate: string;
  readonly tooLargeResourceVersionWaitMs: number;
  readonly store = new ObjectStore();
  /** What the pods' containers wrote (`pods/log`). */
  readonly podLogs = new PodLogs();
  private readonly builtinTypes: readonly ResourceType[];
  private readonly customTypes = new Map<string, ResourceType>();
  private typeCache:
    | {
        all: readonly ResourceType[];
        byPath: Map<string, ResourceType>;
        byKind: Map<string, ResourceType>;
      }
    | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private allocatedIPs = 0;
  /** Set while seeding an object that brings its own status: no controller acts on it. */
  private seedingAsIs = false;

  constructor(settings: ClusterSettings) {
    this.name = settings.name;
    this.token = settings.token;
    this.openshift = settings.openshift;
    this.workloadReadyDelayMs = settings.workloadReadyDelayMs;
    this.caCertificate = settings.caCertificate ?? '';
    this.tooLargeResourceVersionWaitMs = settings.tooLargeResourceVersionWaitMs ?? 3000;
    this.builtinTypes = settings.openshift
      ? [...KUBERNETES_TYPES, ...OPENSHIFT_TYPES]
      : KUBERNETES_TYPES;
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      this.create(
        NAMESPACES,
        'v1',
        '',
        { metadata: { name: ns } },
        {
          dryRun: false,
          fieldManager: 'kube-apiserver',
        },
      );
    }
  }

  /** Every type served now: built-ins, then those from CRDs. */
  types(): readonly ResourceType[] {
    if (!this.typeCache) {
      const custom = [...this.customTypes.values()];
      const shadowed = new Set(custom.map(resourceKey));
      const all = [...this.builtinTypes.filter((t) => !shadowed.has(resourceKey(t))), ...custom];
      const byPath = new Map<string, ResourceType>();
      const byKind = new Map<string, ResourceType>();
      for (const t of all) {
        for (const v of t.versions) {
          byPath.set(`${t.group}/${v}/${t.plural}`, t);
          byKind.set(`${t.group}/${v}/${t.kind}`, t);
        }
      }
      this.typeCache = { all, byPath, byKind };
    }
    return this.typeCache.all;
  }

  findType(group: string, version: string, plural: string): ResourceType | undefined {
    this.types();
    return this.typeCache?.byPath.get(`${group}/${version}/${plural}`);
  }

  findKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    this.types();
    return this.typeCache?.byKind.get(`${group}/${version}/${kind}`);
  }

  nextClusterIP(): string {
    this.allocatedIPs += 1;
    const n = this.allocatedIPs;
    return `172.30.${(n >> 8) & 255}.${n & 255}`;
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  // ---- reads ----

  get(type: ResourceType, namespace: string, name: string): JsonObject {
    if (type.virtual === 'project') return this.project(this.get(NAMESPACES, '', name));
    const obj = this.store.read(resourceKey(type), namespace, name);
    if (!obj) throw notFound(type, name);
    return obj;
  }

  /** Projects are a view of namespaces on OpenShift. */
  project(ns: JsonObject): JsonObject {
    const metadata = { ...metadataOf(ns) };
    delete metadata.managedFields;
    return {
      kind: 'Project',
      apiVersion: 'project.openshift.io/v1',
      metadata,
      spec: isObject(ns.spec) ? ns.spec : {},
      status: isObject(ns.status) ? ns.status : {},
    };
  }

  // ---- writes ----

  private context(
    type: ResourceType,
    version: string,
    manager: string,
    subresource?: string,
  ): WriteContext {
    return {
      manager,
      apiVersion: apiVersionOf(type.group, version),
      builtin: type.builtin,
      statusSubresource: type.statusSubresource,
      ...(subresource ? { subresource } : {}),
    };
  }

  private ensureNamespace(type: ResourceType, namespace: string, name: string): void {
    const ns = this.store.read(resourceKey(NAMESPACES), '', namespace);
    if (!ns) throw notFound(NAMESPACES, namespace);
    if (isObject(ns.metadata) && ns.metadata.deletionTimestamp) {
      const resource = type.group === '' ? type.plural : `${type.plural}.${type.group}`;
      throw new ApiError(
        403,
        'Forbidden',
        `${resource} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
        { name, ...(type.group ? { group: type.group } : {}), kind: type.plural },
      );
    }
  }

  create(
    type: ResourceType,
    version: string,
    namespace: string,
    body: JsonObject,
    options: WriteOptions,
  ): JsonObject {
    if (type.virtual) return this.createProject(type, body, options);
    const obj = clone(body);
    const metadata = metadataOf(obj);
    if (typeof metadata.name !== 'string' || metadata.name === '') {
      if (typeof metadata.generateName === 'string' && metadata.generateName !== '') {
        metadata.name = generatedName(metadata.generateName);
      }
    }
    const name = typeof metadata.name === 'string' ? metadata.name : '';
    validateName(type, name);
    if (typeof metadata.resourceVersion === 'string' && metadata.resourceVersion !== '') {
      throw resourceVersionOnCreate();
    }
    checkNamespace(type, namespace, metadata);
    if (type.namespaced) this.ensureNamespace(type, namespace, name);
    if (this.store.get(resourceKey(type), type.namespaced ? namespace : '', name)) {
      throw alreadyExists(type, name);
    }
    return this.commit(type, version, namespace, name, undefined, obj, options, undefined, false);
  }

  private createProject(type: ResourceType, body: JsonObject, options: WriteOptions): JsonObject {
    const metadata = metadataOf(clone(body));
    const name = typeof metadata.name === 'string' ? metadata.name : '';
    validateName(type, name);
    if (this.store.get(resourceKey(NAMESPACES), '', name)) {
      throw new ApiError(
        409,
        'AlreadyExists',
        `project.project.openshift.io "${name}" already exists`,
        {
          name,
          group: 'project.openshift.io',
          kind: 'project',
        },
      );
    }
    const annotations: Record<string, string> = { ...stringMap(metadata.annotations) };
    if (type.virtual === 'projectrequest') {
      if (typeof body.displayName === 'string')
        annotations['openshift.io/display-name'] = body.displayName;
      if (typeof body.description === 'string')
        annotations['openshift.io/description'] = body.description;
      annotations['openshift.io/requester'] = options.fieldManager;
    }
    const ns = this.create(
      NAMESPACES,
      'v1',
      '',
      { metadata: { name, labels: stringMap(metadata.labels), annotations } },
      options,
    );
    return this.project(ns);
  }

  update(
    type: ResourceType,
    version: string,
    namespace: string,
    name: string,
    body: JsonObject,
    options: WriteOptions,
    subresource?: string,
  ): JsonObject {
    const live = this.get(type, namespace, name);
    const metadata = metadataOf(body);
    if (metadata.name !== undefined && metadata.name !== name) {
      throw badRequest(
        `the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`,
      );
    }
    checkNamespace(type, namespace, metadata);
    const sentRv = rvOf(body);
    if (sentRv !== undefined && sentRv !== '' && sentRv !== rvOf(live)) {
      throw conflict(type, name, STALE_OBJECT);
    }
    const next = subresource === 'status' ? { ...live, status: body.status } : clone(body);
    return this.commit(type, version, namespace, name, live, next, options, subresource, false);
  }

  patch(
    type: ResourceType,
    version: string,
    namespace: string,
    name: string,
    contentType: string,
    patch: unknown,
    options: WriteOptions,
    subresource?: string,
  ): JsonObject {
    const live = this.get(type, namespace, name);
    let patched: JsonObject;
    if (contentType === PatchType.json) patched = applyJsonPatch(live, patch);
    else if (contentType === PatchType.merge) patched = applyMergePatch(live, patch) as JsonObject;
    else if (contentType === PatchType.strategic && type.builtin) {
      patched = applyStrategicMergePatch(live, patch) as JsonObject;
    } else {
      throw new ApiError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
      );
    }
    if (!isObject(patched)) throw badRequest('the patch must produce an object');
    if (rvOf(patched) !== rvOf(live)) throw conflict(type, name, STALE_OBJECT);
    const next = subresource === 'status' ? { ...live, status: patched.status } : patched;
    return this.commit(type, version, namespace, name, live, next, options, subresource, false);
  }

  apply(
    type: ResourceType,
    version: string,
    namespace: string,
    name: string,
    applied: JsonObject,
    options: WriteOptions & { readonly force: boolean },
    subresource?: string,
  ): JsonObject {
    const metadata = metadataOf(applied);
    if (metadata.name !== name) {
      throw badRequest(
        `the name of the object (${String(metadata.name ?? '')}) does not match the name on the URL (${name})`,
      );
    }
    if (metadata.managedFields !== undefined)
      throw badRequest('metadata.managedFields must be nil');
    checkNamespace(type, namespace, metadata);
    const live = this.store.read(resourceKey(type), type.namespaced ? namespace : '', name);
    const sentRv = rvOf(applied);
    if (sentRv !== undefined && sentRv !== '' && !live) throw resourceVersionOnCreate();
    if (sentRv !== undefined && live && sentRv !== rvOf(live))
      throw conflict(type, name, STALE_OBJECT);
    delete metadata.resourceVersion;
    if (!live) {
      validateName(type, name);
      if (type.namespaced) this.ensureNamespace(type, namespace, name);
    }
    const ctx = this.context(type, version, options.fieldManager, subresource);
    let merged = serverSideApply(live, applied, ctx, options.force);
    if (subresource === 'status' && live)
      merged = { ...live, metadata: merged.metadata, status: merged.status };
    return this.commit(type, version, namespace, name, live, merged, options, subresource, true);
  }

  /** Everything a write shares: identity, defaults, validation, generation, managed fields, storage. */
  private commit(
    type: ResourceType,
    version: string,
    namespace: string,
    name: string,
    live: JsonObject | undefined,
    draft: JsonObject,
    options: WriteOptions,
    subresource: string | undefined,
    managedFieldsDone: boolean,
  ): JsonObject {
    const apiVersion = apiVersionOf(type.group, version);
    // Updates get a fresh tree: drafts may share subtrees with `live`, which must
    // stay as it was. Creates are handed a tree of their own already.
    const next = ordered(live ? clone(draft) : draft, apiVersion, type.kind);
    const metadata = metadataOf(next);
    metadata.name = name;
    if (type.namespaced) metadata.namespace = namespace;
    else delete metadata.namespace;
    delete metadata.resourceVersion;
    const liveMeta = live ? metadataOf(live) : undefined;
    if (liveMeta) {
      metadata.uid = liveMeta.uid;
      metadata.creationTimestamp = liveMeta.creationTimestamp;
      if (liveMeta.generation !== undefined) metadata.generation = liveMeta.generation;
      if (liveMeta.deletionTimestamp !== undefined)
        metadata.deletionTimestamp = liveMeta.deletionTimestamp;
      else delete metadata.deletionTimestamp;
    } else {
      metadata.uid = randomUUID();
      metadata.creationTimestamp = nowTimestamp();
      if (type.generation) metadata.generation = 1;
      delete metadata.deletionTimestamp;
    }
    if (type.statusSubresource && subresource !== 'status') {
      if (live?.status !== undefined) next.status = live.status;
      else delete next.status;
    }
    applyDefaults(type, next, live, this, this.name);
    if (type === CRDS || (type.group === CRDS.group && type.plural === CRDS.plural)) {
      next.status = crdStatus(next);
    }
    if (live) {
      validateUpdate(type, name, live, next);
      if (type.generation && specChanged(live, next)) {
        metadata.generation =
          (typeof liveMeta?.generation === 'number' ? liveMeta.generation : 0) + 1;
      }
    }
    if (!managedFieldsDone) {
      trackUpdate(live, next, this.context(type, version, options.fieldManager, subresource));
    }
    const key = resourceKey(type);
    const ns = type.namespaced ? namespace : '';
    if (options.dryRun) {
      const rv = rvOf(live);
      if (rv !== undefined) metadata.resourceVersion = rv;
      return next;
    }
    const finalizers = Array.isArray(metadata.finalizers) ? metadata.finalizers : [];
    if (metadata.deletionTimestamp && finalizers.length === 0 && type !== NAMESPACES) {
      this.store.remove(key, ns, name);
      this.afterDelete(type, next, 'Background');
      if (ns !== '') this.removeNamespaceIfDone(ns);
      return next;
    }
    this.store.put(key, next, live ? 'MODIFIED' : 'ADDED');
    if (type.plural === CRDS.plural && type.group === CRDS.group) this.registerCrd(next);
    if (
      type.workload &&
      !this.seedingAsIs &&
      (!live || metadata.generation !== liveMeta?.generation)
    ) {
      this.scheduleReady(type, version, ns, name, metadata.generation);
    }
    if (
      !live &&
      !this.seedingAsIs &&
      type.kind === 'Secret' &&
      type.group === '' &&
      next.type === TOKEN_SECRET
    ) {
      this.afterControllerDelay(() => fillServiceAccountToken(this, ns, name));
    }
    return next;
  }

  /** Runs a controller's reaction once the controller delay has passed (never when negative). */
  afterControllerDelay(action: () => void): void {
    if (this.workloadReadyDelayMs < 0) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, this.workloadReadyDelayMs);
    timer.unref();
    this.timers.add(timer);
  }

  private scheduleReady(
    type: ResourceType,
    version: string,
    namespace: string,
    name: string,
    generation: unknown,
  ): void {
    if (this.workloadReadyDelayMs < 0) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const live = this.store.read(resourceKey(type), namespace, name);
      if (!live || metadataOf(live).generation !== generation) return;
      let base = live;
      if (type.kind === 'Deployment' && type.group === 'apps') {
        const revision = syncReplicaSets(this, live);
        const annotations = stringMap(metadataOf(live).annotations);
        if (annotations[REVISION_ANNOTATION] !== revision) {
          base = clone(live);
          metadataOf(base).annotations = { ...annotations, [REVISION_ANNOTATION]: revision };
          trackUpdate(live, base, this.context(type, version, 'kube-controller-manager'));
        }
      }
      const next = clone(base);
      next.status = readyStatus(type.kind, base, nowTimestamp());
      trackUpdate(base, next, this.context(type, version, 'kube-controller-manager', 'status'));
      this.store.put(resourceKey(type), next, 'MODIFIED');
    }, this.workloadReadyDelayMs);
    timer.unref();
    this.timers.add(timer);
  }

  private registerCrd(crd: JsonObject): void {
    const spec = isObject(crd.spec) ? crd.spec : {};
    const names = isObject(spec.names) ? spec.names : {};
    const versions = (Array.isArray(spec.versions) ? spec.versions : []).filter(isObject);
    const served = versions.filter((v) => v.served !== false);
    served.sort((a, b) => Number(b.storage === true) - Number(a.storage === true));
    const kind = String(names.kind ?? '');
    const type: ResourceType = {
      group: String(spec.group ?? ''),
      versions: served.map((v) => String(v.name)),
      plural: String(names.plural ?? ''),
      singular: String(names.singular ?? kind.toLowerCase()),
      kind,
      namespaced: spec.scope !== 'Cluster',
      shortNames: Array.isArray(names.shortNames) ? names.shortNames.map(String) : [],
      statusSubresource: versions.some(
        (v) => isObject(v.subresources) && isObject(v.subresources.status),
      ),
      generation: true,
      builtin: false,
    };
    this.customTypes.set(resourceKey(type), type);
    this.typeCache = undefined;
  }

  // ---- deletes ----

  delete(type: ResourceType, namespace: string, name: string, options: DeleteOptions): JsonObject {
    if (type.virtual === 'project') {
      const deleted = this.delete(NAMESPACES, '', name, options);
      return deleted.kind === 'Namespace' ? this.project(deleted) : deleted;
    }
    const live = this.get(type, namespace, name);
    if (type === NAMESPACES && IMMORTAL_NAMESPACES.has(name)) {
      // The NamespaceLifecycle admission plugin's refusal.
      throw new ApiError(
        403,
        'Forbidden',
        `namespaces "${name}" is forbidden: this namespace may not be deleted`,
        { name, kind: 'namespaces' },
      );
    }
    const metadata = metadataOf(live);
    const pre = options.preconditions;
    if (pre?.uid !== undefined && pre.uid !== metadata.uid) {
      throw conflict(
        type,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(metadata.uid)}`,
      );
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== metadata.resourceVersion) {
      throw conflict(
        type,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${String(metadata.resourceVersion)}`,
      );
    }
    const key = resourceKey(type);
    const ns = type.namespaced ? namespace : '';
    const finalizers = Array.isArray(metadata.finalizers) ? metadata.finalizers : [];
    const isNamespace = type === NAMESPACES;
    if (isNamespace || finalizers.length > 0) {
      if (!metadata.deletionTimestamp) {
        metadata.deletionTimestamp = nowTimestamp();
        metadata.deletionGracePeriodSeconds = 0;
        if (isNamespace) live.status = { phase: 'Terminating' };
        if (options.dryRun) return live;
        this.store.put(key, live, 'MODIFIED');
        if (isNamespace) this.finalizeNamespace(name);
      }
      return live;
    }
    if (options.dryRun) return successStatus(type, name, String(metadata.uid));
    this.store.remove(key, ns, name);
    this.afterDelete(type, live, options.propagationPolicy ?? 'Background');
    return successStatus(type, name, String(metadata.uid));
  }

  deleteCollection(
    type: ResourceType,
    namespace: string,
    names: readonly string[],
    options: DeleteOptions,
  ): void {
    for (const name of names) {
      try {
        this.delete(type, namespace, name, options);
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 404)) throw error;
      }
    }
  }

  /**
   * The namespace controller: contents are deleted at once (those with
   * finalizers wait for them), the namespace goes once it is empty.
   */
  private finalizeNamespace(name: string): void {
    for (const type of this.types()) {
      if (!type.namespaced || type.virtual) continue;
      for (const object of this.store.all(resourceKey(type), { namespace: name })) {
        this.delete(type, name, object.name, { dryRun: false });
      }
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.removeNamespaceIfDone(name);
    }, 0);
    timer.unref();
    this.timers.add(timer);
  }

  private removeNamespaceIfDone(name: string): void {
    const ns = this.store.read(resourceKey(NAMESPACES), '', name);
    if (!ns || !metadataOf(ns).deletionTimestamp) return;
    for (const type of this.types()) {
      if (
        type.namespaced &&
        !type.virtual &&
        this.store.all(resourceKey(type), { namespace: name }).length > 0
      ) {
        return;
      }
    }
    this.store.remove(resourceKey(NAMESPACES), '', name);
  }

  /** Garbage collection by ownerReferences, and CRD removal. */
  private afterDelete(type: ResourceType, deleted: JsonObject, policy: string): void {
    const metadata = metadataOf(deleted);
    const uid = String(metadata.uid ?? '');
    if (type.plural === CRDS.plural && type.group === CRDS.group) {
      const spec = isObject(deleted.spec) ? deleted.spec : {};
      const names = isObject(spec.names) ? spec.names : {};
      const crKey = `${String(spec.group)}/${String(names.plural)}`;
      this.customTypes.delete(crKey);
      this.typeCache = undefined;
      this.store.dropCollection(crKey);
    }
    if (uid === '') return;
    for (const ref of this.store.dependentsOf(uid)) {
      const t = this.types().find((x) => resourceKey(x) === ref.resource);
      const dependent = this.store.read(ref.resource, ref.namespace, ref.name);
      if (!t || !dependent) continue;
      if (policy === 'Orphan') {
        const refs = metadataOf(dependent).ownerReferences;
        const remaining = Array.isArray(refs)
          ? refs.filter((r) => !(isObject(r) && r.uid === uid))
          : [];
        if (remaining.length > 0) metadataOf(dependent).ownerReferences = remaining;
        else delete metadataOf(dependent).ownerReferences;
        this.store.put(ref.resource, dependent, 'MODIFIED');
      } else {
        this.delete(t, ref.namespace, ref.name, { dryRun: false, propagationPolicy: policy });
      }
    }
  }

  // ---- seeding ----

  /** Stores objects as given (managed fields included), creating missing namespaces. */
  seed(objects: readonly JsonObject[], manager: string): void {
    for (const raw of objects) {
      const apiVersion = String(raw.apiVersion ?? '');
      const kind = String(raw.kind ?? '');
      const type = this.findKind(apiVersion, kind);
      if (!type) throw new Error(`cluster ${this.name}: no resource serves ${apiVersion} ${kind}`);
      const metadata = metadataOf(raw);
      const name = String(metadata.name ?? '');
      const namespace = type.namespaced ? String(metadata.namespace ?? 'default') : '';
      const version = apiVersion.includes('/') ? (apiVersion.split('/')[1] ?? '') : apiVersion;
      if (type.namespaced && !this.store.get(resourceKey(NAMESPACES), '', namespace)) {
        this.create(
          NAMESPACES,
          'v1',
          '',
          { metadata: { name: namespace } },
          { dryRun: false, fieldManager: manager },
        );
      }
      const live = this.store.read(resourceKey(type), namespace, name);
      const body = clone(raw);
      if (type.virtual) {
        this.create(type, version, namespace, body, { dryRun: false, fieldManager: manager });
        continue;
      }
      const status = body.status;
      const given = metadataOf(body).managedFields;
      const keepGiven = Array.isArray(given) && given.length > 0;
      this.seedingAsIs = status !== undefined;
      try {
        this.commit(
          type,
          version,
          namespace,
          name,
          live,
          body,
          { dryRun: false, fieldManager: manager },
          undefined,
          keepGiven,
        );
      } finally {
        this.seedingAsIs = false;
      }
      if (status !== undefined && type.statusSubresource) {
        // Seeds describe the state as it is, status included.
        const stored = this.store.read(resourceKey(type), namespace, name);
        if (stored) {
          stored.status = status;
          this.store.put(resourceKey(type), stored, 'MODIFIED');
        }
      }
    }
  }
}

function checkNamespace(type: ResourceType, namespace: string, metadata: JsonObject): void {
  if (
    type.namespaced &&
    typeof metadata.namespace === 'string' &&
    metadata.namespace !== '' &&
    metadata.namespace !== namespace
  ) {
    throw badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
}

function successStatus(type: ResourceType, name: string, uid: string): JsonObject {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name, ...(type.group ? { group: type.group } : {}), kind: type.plural, uid },
  };
}

function crdStatus(crd: JsonObject): JsonObject {
  const spec = isObject(crd.spec) ? crd.spec : {};
  const versions = (Array.isArray(spec.versions) ? spec.versions : []).filter(isObject);
  const storage = versions.find((v) => v.storage === true) ?? versions[0];
  const now = nowTimestamp();
  return {
    acceptedNames: isObject(spec.names) ? spec.names : {},
    conditions: [
      {
        type: 'NamesAccepted',
        status: 'True',
        lastTransitionTime: now,
        reason: 'NoConflicts',
        message: 'no conflicts found',
      },
      {
        type: 'Established',
        status: 'True',
        lastTransitionTime: now,
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
      },
    ],
    storedVersions: storage ? [String(storage.name)] : [],
  };
}
