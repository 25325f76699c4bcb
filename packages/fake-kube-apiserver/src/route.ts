/** What a request addresses, read from its path and method alone (cheap: done before faults). */
export interface Route {
  readonly area: 'resource' | 'discovery' | 'other';
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespace: string;
  readonly name: string;
  readonly subresource: string;
  readonly verb: Verb;
}

export type Verb =
  | 'get'
  | 'list'
  | 'watch'
  | 'create'
  | 'update'
  | 'patch'
  | 'apply'
  | 'delete'
  | 'deletecollection'
  | 'discovery'
  | 'other';

export const MUTATING_VERBS: ReadonlySet<Verb> = new Set([
  'create',
  'update',
  'patch',
  'apply',
  'delete',
  'deletecollection',
]);

export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function verbOf(method: string, name: string, query: URLSearchParams, contentType: string): Verb {
  switch (method) {
    case 'GET': {
      if (name !== '') return 'get';
      const watch = query.get('watch');
      return watch === 'true' || watch === '1' ? 'watch' : 'list';
    }
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return contentType === 'application/apply-patch+yaml' ? 'apply' : 'patch';
    case 'DELETE':
      return name === '' ? 'deletecollection' : 'delete';
    default:
      return 'other';
  }
}

export function parseRoute(
  method: string,
  pathname: string,
  query: URLSearchParams,
  contentType: string,
): Route {
  const segments = pathname.split('/').filter((s) => s !== '');
  const empty = { group: '', version: '', plural: '', namespace: '', name: '', subresource: '' };
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api') {
    if (segments.length <= 2)
      return { area: 'discovery', ...empty, version: segments[1] ?? '', verb: 'discovery' };
    group = '';
    version = segments[1] ?? '';
    rest = segments.slice(2);
  } else if (segments[0] === 'apis') {
    if (segments.length <= 3) {
      return {
        area: 'discovery',
        ...empty,
        group: segments[1] ?? '',
        version: segments[2] ?? '',
        verb: 'discovery',
      };
    }
    group = segments[1] ?? '';
    version = segments[2] ?? '';
    rest = segments.slice(3);
  } else {
    return { area: 'other', ...empty, verb: 'other' };
  }
  let namespace = '';
  let plural: string;
  let name: string;
  let subresource: string;
  if (
    rest[0] === 'namespaces' &&
    rest.length >= 3 &&
    rest[2] !== 'status' &&
    rest[2] !== 'finalize'
  ) {
    namespace = rest[1] ?? '';
    plural = rest[2] ?? '';
    name = rest[3] ?? '';
    subresource = rest[4] ?? '';
  } else {
    plural = rest[0] ?? '';
    name = rest[1] ?? '';
    subresource = rest[2] ?? '';
  }
  return {
    area: 'resource',
    group,
    version,
    plural,
    namespace,
    name,
    subresource,
    verb: verbOf(method, name, query, contentType),
  };
}
