import type { ResourceType } from './catalogue.ts';
import type { JsonObject } from './json.ts';
import type { Route } from './route.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import type { Query, StoredObject } from './store.ts';

/** An object as served at `apiVersion`: a multi-version CRD serves one stored object under each. */
export function render(stored: StoredObject, apiVersion: string): Buffer {
  if (stored.apiVersion === apiVersion) return stored.bytes;
  const obj = JSON.parse(stored.json) as JsonObject;
  return Buffer.from(JSON.stringify({ ...obj, apiVersion }));
}

/** The namespace, label and field selection of a list or watch request. */
export function queryOf(route: Route, type: ResourceType, params: URLSearchParams): Query {
  const labels = parseLabelSelector(params.get('labelSelector'));
  const fields = parseFieldSelector(params.get('fieldSelector'));
  return {
    ...(type.namespaced && route.namespace !== '' ? { namespace: route.namespace } : {}),
    ...(labels ? { labels } : {}),
    ...(fields ? { fields } : {}),
  };
}
