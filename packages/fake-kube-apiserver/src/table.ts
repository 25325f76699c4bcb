import { isObject, type JsonObject } from './json.ts';

/** `kubectl get` asks for `meta.k8s.io/v1` Tables; ours have the generic Name and Age columns. */

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

const COLUMNS = [
  {
    name: 'Name',
    type: 'string',
    format: 'name',
    description: 'Name must be unique within a namespace.',
    priority: 0,
  },
  {
    name: 'Age',
    type: 'string',
    format: '',
    description:
      'CreationTimestamp is a timestamp representing the server time when this object was created.',
    priority: 0,
  },
];

export function tableRow(obj: JsonObject, includeObject: string): JsonObject {
  const metadata = isObject(obj.metadata) ? obj.metadata : {};
  const row: JsonObject = { cells: [metadata.name, age(metadata.creationTimestamp)] };
  if (includeObject === 'Object') row.object = obj;
  else if (includeObject !== 'None') {
    const { managedFields: _m, ...rest } = metadata;
    row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: rest };
  }
  return row;
}

export function table(objects: JsonObject[], listMeta: JsonObject, includeObject: string): string {
  return JSON.stringify({
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: COLUMNS,
    rows: objects.map((o) => tableRow(o, includeObject)),
  });
}
