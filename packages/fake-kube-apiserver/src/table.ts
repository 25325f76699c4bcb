import { isObject, type JsonObject } from './json.ts';

/** `kubectl get` asks for `meta.k8s.io/v1` Tables instead of objects. */

export function wantsTable(accept: string | undefined): boolean {
  return accept?.includes('as=Table') === true;
}

function age(timestamp: unknown): string {
  const since = typeof timestamp === 'string' ? Date.now() - Date.parse(timestamp) : 0;
  const s = Math.max(0, Math.floor(since / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h` : `${Math.floor(h / 24)}d`;
}

interface Column {
  readonly name: string;
  readonly type: string;
  readonly format: string;
  readonly description: string;
  readonly cell: (obj: JsonObject) => unknown;
}

const part = (obj: JsonObject, key: string): JsonObject => {
  const value = obj[key];
  return isObject(value) ? value : {};
};
const count = (value: unknown) => (isObject(value) ? Object.keys(value).length : 0);
const column = (name: string, type: string, cell: Column['cell'], description = ''): Column => ({
  name,
  type,
  format: '',
  description,
  cell,
});

const NAME: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  cell: (o) => part(o, 'metadata').name,
};
const AGE = column(
  'Age',
  'string',
  (o) => age(part(o, 'metadata').creationTimestamp),
  'CreationTimestamp is a timestamp representing the server time when this object was created.',
);

/** The columns the real server prints for the kinds people look at in the demo; Name and Age elsewhere. */
const COLUMNS_BY_KIND: Record<string, readonly Column[]> = {
  Namespace: [NAME, column('Status', 'string', (o) => part(o, 'status').phase ?? ''), AGE],
  ConfigMap: [NAME, column('Data', 'integer', (o) => count(o.data) + count(o.binaryData)), AGE],
  Secret: [
    NAME,
    column('Type', 'string', (o) => o.type ?? ''),
    column('Data', 'integer', (o) => count(o.data)),
    AGE,
  ],
  Deployment: [
    NAME,
    column('Ready', 'string', (o) => {
      const replicas = part(o, 'spec').replicas ?? 1;
      return `${String(part(o, 'status').readyReplicas ?? 0)}/${String(replicas)}`;
    }),
    column('Up-to-date', 'integer', (o) => part(o, 'status').updatedReplicas ?? 0),
    column('Available', 'integer', (o) => part(o, 'status').availableReplicas ?? 0),
    AGE,
  ],
  Service: [
    NAME,
    column('Type', 'string', (o) => part(o, 'spec').type ?? ''),
    column('Cluster-IP', 'string', (o) => part(o, 'spec').clusterIP ?? '<none>'),
    column('External-IP', 'string', () => '<none>'),
    column('Port(s)', 'string', (o) => {
      const ports = part(o, 'spec').ports;
      if (!Array.isArray(ports) || ports.length === 0) return '<none>';
      return ports
        .filter(isObject)
        .map((p) => `${String(p.port)}/${String(p.protocol ?? 'TCP')}`)
        .join(',');
    }),
    AGE,
  ],
  // `oc get events`: the columns the real server prints by default (priority 0).
  Event: [
    column('Last Seen', 'string', (o) =>
      age(o.lastTimestamp ?? o.eventTime ?? part(o, 'metadata').creationTimestamp),
    ),
    column('Type', 'string', (o) => o.type ?? ''),
    column('Reason', 'string', (o) => o.reason ?? ''),
    column('Object', 'string', (o) => {
      const involved = part(o, 'involvedObject');
      return `${String(involved.kind ?? '').toLowerCase()}/${String(involved.name ?? '')}`;
    }),
    column('Message', 'string', (o) => o.message ?? ''),
  ],
};
const GENERIC: readonly Column[] = [NAME, AGE];

function columnsFor(kind: unknown): readonly Column[] {
  return (typeof kind === 'string' ? COLUMNS_BY_KIND[kind] : undefined) ?? GENERIC;
}

function tableRow(
  obj: JsonObject,
  includeObject: string,
  columns: readonly Column[] = columnsFor(obj.kind),
): JsonObject {
  const metadata = part(obj, 'metadata');
  const row: JsonObject = { cells: columns.map((c) => c.cell(obj)) };
  if (includeObject === 'Object') row.object = obj;
  else if (includeObject !== 'None') {
    const { managedFields: _m, ...rest } = metadata;
    row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: rest };
  }
  return row;
}

export function table(
  objects: JsonObject[],
  listMeta: JsonObject,
  includeObject: string,
  kind?: string,
): string {
  const columns = columnsFor(kind ?? objects[0]?.kind);
  return JSON.stringify({
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: columns.map(({ cell: _cell, ...definition }) => ({
      ...definition,
      priority: 0,
    })),
    rows: objects.map((o) => tableRow(o, includeObject, columns)),
  });
}
