/**
 * `OpenshiftResource`: one Kubernetes object body plus the integration that owns it, with the
 * original's validation, `qontract.*` annotations and sha256 (upstream
 * `reconcile/utils/openshift_resource.py` `OpenshiftResource`).
 */
import { hash } from 'node:crypto';
import {
  canonicalize,
  QONTRACT_ANNOTATION_CALLER_NAME,
  QONTRACT_ANNOTATION_INTEGRATION,
  QONTRACT_ANNOTATION_INTEGRATION_VERSION,
  QONTRACT_ANNOTATION_SHA256SUM,
  QONTRACT_ANNOTATION_UPDATE,
} from './canonicalize.ts';
import { ConstructResourceError, ResourceDataError } from './errors.ts';
import { objIntersectEqual } from './obj-intersect-equal.ts';
import { pyJsonDumps } from './py-json.ts';
import { pyStr } from './py-str.ts';
import {
  dictGet,
  dictSet,
  isDict,
  isPyStr,
  type PyDict,
  type PyObject,
  type PyValue,
  pyDeepCopy,
  pyTruthy,
} from './py-values.ts';

const DNS_NAMES_URL = 'https://kubernetes.io/docs/concepts/overview/working-with-objects/names/';
const DNS_SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_SUBDOMAIN_MAX_LENGTH = 253;
const DNS_LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_LABEL_MAX_LENGTH = 63;
const KINDS_WITHOUT_NAME_CHECK: ReadonlySet<string> = new Set([
  'Role',
  'RoleBinding',
  'ClusterRole',
  'ClusterRoleBinding',
]);
// python-semver 3 `Version.parse`: major.minor.patch required, strict prerelease identifiers.
const SEMVER_RE =
  /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-((?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** Python `re.match(pattern + '$', s)`: `$` also matches before one final newline. */
function pyFullMatch(re: RegExp, s: string): boolean {
  return re.test(s.endsWith('\n') ? s.slice(0, -1) : s);
}

function pyLen(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** `Deployment` + `apps/v1` → `Deployment.apps`; `Pod` + `v1` → `Pod`. */
export function fullyQualifiedKind(kind: string, apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash >= 0 ? `${kind}.${apiVersion.slice(0, slash)}` : kind;
}

function semverMajor(version: PyValue | undefined): number | undefined {
  if (typeof version !== 'string') return undefined;
  const m = SEMVER_RE.exec(version.endsWith('\n') ? version.slice(0, -1) : version);
  return m ? Number(m[1]) : undefined;
}

/** `%Y-%m-%dT%H:%M:%SZ` in UTC. */
function utcNowStamp(now: Date): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

export interface OpenshiftResourceOptions {
  /** Where the body came from (usually the app-interface path); used in error messages. */
  errorDetails?: string;
  callerName?: string | null;
  /** Run the name and container validation (default true). */
  validate?: boolean;
}

export class OpenshiftResource {
  /** The body, not copied: callers that alias it see the same object (like the original). */
  body: PyValue;
  readonly integration: string;
  readonly integrationVersion: string;
  readonly errorDetails: string;
  readonly callerName: string | null;

  constructor(
    body: unknown,
    integration: string,
    integrationVersion: string,
    options: OpenshiftResourceOptions = {},
  ) {
    this.body = body as PyValue;
    this.integration = integration;
    this.integrationVersion = integrationVersion;
    this.errorDetails = options.errorDetails ?? '';
    this.callerName = options.callerName ?? null;
    if (options.validate ?? true) this.verifyValidK8sObject();
  }

  get kind(): PyValue {
    const kind = isDict(this.body) ? dictGet(this.body, 'kind') : undefined;
    if (kind === undefined) throw this.dataError(isDict(this.body) ? 'KeyError' : 'TypeError');
    return kind;
  }

  get name(): PyValue {
    if (!isDict(this.body)) throw this.dataError('TypeError');
    const metadata = dictGet(this.body, 'metadata');
    if (metadata === undefined) throw this.dataError('KeyError');
    if (!isDict(metadata)) throw this.dataError('TypeError');
    const name = dictGet(metadata, 'name');
    if (name !== undefined) return name;
    if (dictGet(this.body, 'kind') === 'PipelineRun') {
      const generateName = dictGet(metadata, 'generateName');
      if (typeof generateName === 'string') return Array.from(generateName).slice(0, -1).join('');
      if (generateName !== undefined) throw this.dataError('TypeError');
    }
    throw this.dataError('KeyError');
  }

  /** `metadata.annotations`; `{}` when absent, `null` when explicitly null. */
  get annotations(): PyObject | PyDict | null {
    const metadata = isDict(this.body) ? dictGet(this.body, 'metadata') : undefined;
    const ann = isDict(metadata) ? dictGet(metadata, 'annotations') : undefined;
    if (ann === undefined) return {};
    if (ann === null) return null;
    return isDict(ann) ? ann : {};
  }

  get kindAndGroup(): string {
    const kind = this.kind;
    const apiVersion = isDict(this.body) ? dictGet(this.body, 'apiVersion') : undefined;
    if (typeof kind !== 'string' || typeof apiVersion !== 'string') {
      throw new ResourceDataError('TypeError', 'kind and apiVersion must be strings');
    }
    return fullyQualifiedKind(kind, apiVersion);
  }

  get caller(): string | null {
    if (this.callerName) return this.callerName;
    const value = this.annotations
      ? dictGet(this.annotations, QONTRACT_ANNOTATION_CALLER_NAME)
      : undefined;
    return typeof value === 'string' ? value : null;
  }

  private dataError(kind: 'KeyError' | 'TypeError'): ConstructResourceError {
    return new ConstructResourceError(
      `resource invalid data (${kind}). details: ${this.errorDetails}`,
    );
  }

  private verifyValidK8sObject(): void {
    const name = this.name;
    const kind = this.kind;
    if (!pyTruthy(name))
      throw new ConstructResourceError(`resource has an empty name. details: ${this.errorDetails}`);
    const kindText = pyStr(kind);
    const nameText = pyStr(name);
    if (typeof kind !== 'string' || !KINDS_WITHOUT_NAME_CHECK.has(kind)) {
      if (!isPyStr(name))
        throw new ResourceDataError('TypeError', 'expected string or bytes-like object');
      if (
        typeof name !== 'string' ||
        !pyFullMatch(DNS_SUBDOMAIN_RE, name) ||
        pyLen(name) > DNS_SUBDOMAIN_MAX_LENGTH
      ) {
        throw new ConstructResourceError(
          `The ${kindText} "${nameText}" is invalid: metadata.name: Invalid value: "${nameText}". This field must adhere to DNS-1123 subdomain names spec.More info can be found at ${DNS_NAMES_URL}.`,
        );
      }
    }
    const containers = this.podTemplateContainers();
    if (containers === undefined) return;
    const prefix = `The ${kindText} "${nameText}" is invalid:`;
    if (!Array.isArray(containers))
      throw new ConstructResourceError(`${prefix} spec.template.spec.containers is not a list`);
    for (const container of containers) {
      if (!isDict(container) || dictGet(container, 'name') === undefined) {
        if (!isDict(container))
          throw new ResourceDataError('TypeError', 'container is not a mapping');
        throw new ConstructResourceError(
          `${prefix} an item in spec.template.spec.containers was found without a required name field`,
        );
      }
      const cname = dictGet(container, 'name');
      if (!isPyStr(cname))
        throw new ResourceDataError('TypeError', 'expected string or bytes-like object');
      if (
        typeof cname !== 'string' ||
        !pyFullMatch(DNS_LABEL_RE, cname) ||
        pyLen(cname) > DNS_LABEL_MAX_LENGTH
      ) {
        throw new ConstructResourceError(
          `${prefix} an container in spec.template.spec.containers was found with an invalid name (${pyStr(cname)}). More info at ${DNS_NAMES_URL}.`,
        );
      }
    }
  }

  /** `spec.template.spec.containers`; `undefined` on a missing key (the check is skipped then). */
  private podTemplateContainers(): PyValue | undefined {
    let current: PyValue | undefined = this.body;
    for (const key of ['spec', 'template', 'spec', 'containers']) {
      if (!isDict(current))
        throw new ResourceDataError('TypeError', `'${typeof current}' object is not subscriptable`);
      current = dictGet(current, key);
      if (current === undefined) return undefined;
    }
    return current;
  }

  /** The canonical body serialised like Python `json.dumps(sort_keys=True)`: the text that is hashed. */
  canonicalJson(): string {
    return pyJsonDumps(canonicalize(this.body));
  }

  /** The `qontract.sha256sum` of this body (independent of integration, version, caller and time). */
  sha256sum(): string {
    return sha256Hex(this.canonicalJson());
  }

  /** The body plus the `qontract.*` annotations, as a new resource (like the original's `annotate()`). */
  annotate(options: { canonicalize?: boolean; now?: Date } = {}): OpenshiftResource {
    const sha =
      (options.canonicalize ?? true) ? this.sha256sum() : sha256Hex(pyJsonDumps(this.body));
    const body = pyDeepCopy(this.body);
    if (!isDict(body)) throw new ResourceDataError('TypeError', 'body is not a mapping');
    const metadata = dictGet(body, 'metadata');
    if (!isDict(metadata)) throw new ResourceDataError('TypeError', 'metadata is not a mapping');
    let ann = dictGet(metadata, 'annotations');
    if (!isDict(ann)) {
      ann = {};
      dictSet(metadata, 'annotations', ann);
    }
    dictSet(ann, QONTRACT_ANNOTATION_INTEGRATION, this.integration);
    dictSet(ann, QONTRACT_ANNOTATION_INTEGRATION_VERSION, this.integrationVersion);
    dictSet(ann, QONTRACT_ANNOTATION_SHA256SUM, sha);
    dictSet(ann, QONTRACT_ANNOTATION_UPDATE, utcNowStamp(options.now ?? new Date()));
    if (this.callerName) dictSet(ann, QONTRACT_ANNOTATION_CALLER_NAME, this.callerName);
    return new OpenshiftResource(body, this.integration, this.integrationVersion);
  }

  hasValidSha256sum(): boolean {
    const stored = this.annotations
      ? dictGet(this.annotations, QONTRACT_ANNOTATION_SHA256SUM)
      : undefined;
    return stored !== undefined && stored === this.sha256sum();
  }

  /** Whether the object is ours: same integration, same semver major, and a sha annotation. */
  hasQontractAnnotations(): boolean {
    const ann = this.annotations;
    if (!ann) return false;
    if (dictGet(ann, QONTRACT_ANNOTATION_INTEGRATION) !== this.integration) return false;
    const theirs = semverMajor(dictGet(ann, QONTRACT_ANNOTATION_INTEGRATION_VERSION));
    const ours = semverMajor(this.integrationVersion);
    if (theirs === undefined || ours === undefined || theirs !== ours) return false;
    const sha = dictGet(ann, QONTRACT_ANNOTATION_SHA256SUM);
    return sha !== undefined && sha !== null;
  }

  hasOwnerReference(): boolean {
    const metadata = isDict(this.body) ? dictGet(this.body, 'metadata') : undefined;
    const refs = isDict(metadata) ? dictGet(metadata, 'ownerReferences') : undefined;
    return Array.isArray(refs) && refs.length > 0;
  }

  /**
   * The original's `desired == current` (`obj_intersect_equal`): desired's fields must be found
   * in `current`; extra fields on current are ignored except extra labels and data keys.
   */
  equals(current: OpenshiftResource): boolean {
    return objIntersectEqual(this.body, current.body);
  }

  /** The payload the original pipes to `oc apply`: `json.dumps(body, sort_keys=True)`. */
  toJson(): string {
    return pyJsonDumps(this.body);
  }
}

/** `""` for a falsy value, else base64 of the UTF-8 of `str(value)` (build_secret's helper). */
export function base64EncodeSecretFieldValue(value: PyValue): string {
  if (!pyTruthy(value)) return '';
  return Buffer.from(pyStr(value), 'utf8').toString('base64');
}

/** The original's `build_secret`: an Opaque Secret from unencoded values. */
export function buildSecret(options: {
  name: string;
  integration: string;
  integrationVersion: string;
  unencodedData: Record<string, PyValue>;
  errorDetails?: string;
  callerName?: string | null;
  annotations?: Record<string, string> | null;
}): OpenshiftResource {
  const data: PyObject = {};
  for (const [k, v] of Object.entries(options.unencodedData))
    data[k] = base64EncodeSecretFieldValue(v);
  const body: PyObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: { name: options.name, annotations: options.annotations ?? {} },
    data,
  };
  return new OpenshiftResource(body, options.integration, options.integrationVersion, {
    errorDetails: options.errorDetails ?? '',
    callerName: options.callerName ?? null,
  });
}
