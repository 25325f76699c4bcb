/**
 * Reading objects: a list followed page by page (`continue` tokens), each
 * page's items made as it arrives (the caller's `each`: the engine keeps the
 * compact form) and, in a loop, handed out again where their bytes did not
 * change (`reuse`, listed-objects.ts); a GET by name read the same way.
 */
import { type ApiResource, apiVersionOf, resourcePath } from './api-resources.ts';
import { type KubeObject, type KubeTransport, PAGE_BUFFERS } from './kube-transport.ts';
import {
  type ClusterListedObjects,
  type ListPage,
  madeObject,
  namespacesKey,
  readListPage,
  readObject,
} from './listed-objects.ts';

/** How `list` reads (see `ListReader.list`). */
export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  each?: (item: KubeObject) => KubeObject;
  /** What this cluster's lists returned in the previous run of a loop (relist.ts). */
  reuse?: ClusterListedObjects | undefined;
  namespaces?: ReadonlySet<string>;
}

/** How `get` reads (see `ListReader.get`). */
export interface GetOptions {
  each?: (item: KubeObject) => KubeObject;
  /** What this cluster's GETs returned in the previous run of a loop (relist.ts). */
  reuse?: ClusterListedObjects | undefined;
}

/** The reads of one client: its transport and page size. */
export class ListReader {
  readonly #transport: KubeTransport;
  readonly #pageSize: number;

  constructor(transport: KubeTransport, pageSize: number) {
    this.#transport = transport;
    this.#pageSize = pageSize;
  }

  /**
   * All objects of `r` (in `namespace`, or cluster-wide), following `continue`
   * tokens. `each` maps every item as its page arrives (the engine keeps the
   * compact form), so the parsed pages are not all held at once.
   *
   * `reuse` (with `each`: what the cluster's lists returned in the previous
   * run of a loop): the items are frozen, and an item whose bytes the
   * previous run's list of the same scope returned is that run's object, not
   * decoded again.
   *
   * `namespaces` (a cluster-wide list of a namespaced kind): only the items
   * of these namespaces are returned, and the others are not decoded (see
   * `ListItemSettings.namespaces`).
   */
  async list(r: ApiResource, namespace?: string, options: ListOptions = {}): Promise<KubeObject[]> {
    const items: KubeObject[] = [];
    const settings = {
      apiVersion: apiVersionOf(r),
      kind: r.kind,
      each: options.each,
      namespaces: options.namespaces,
    };
    const reuse =
      options.reuse && options.each
        ? options.reuse.list(
            [
              settings.apiVersion,
              r.kind,
              namespace ?? '',
              options.labelSelector ?? '',
              options.fieldSelector ?? '',
              // Another set of namespaces keeps other items of the same pages.
              ...namespacesKey(options.namespaces),
            ].join('\u0000'),
            options.each,
          )
        : undefined;
    let cont: string | undefined;
    do {
      const body = (await this.#transport.request('GET', resourcePath(r, namespace), 'list', {
        query: {
          limit: this.#pageSize,
          continue: cont,
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
        },
        raw: true,
      })) as Buffer;
      let page: ListPage;
      try {
        page = readListPage(body, settings, reuse);
      } finally {
        PAGE_BUFFERS.give(body);
      }
      for (const item of page.items) items.push(item);
      cont = page.continue;
    } while (cont);
    reuse?.commit();
    return items;
  }

  /**
   * One object of `r`, or undefined when there is none. `each` makes it as a
   * list's items are made (`apiVersion` and `kind` filled in first). `reuse`
   * (with `each`, as for `list`): the object is frozen, and an answer whose
   * bytes the previous run's GET of the same name returned is that run's
   * object, not decoded again.
   */
  async get(
    r: ApiResource,
    namespace: string | undefined,
    name: string,
    options: GetOptions = {},
  ): Promise<KubeObject | undefined> {
    const settings = {
      apiVersion: apiVersionOf(r),
      kind: r.kind,
      each: options.each,
    };
    const path = resourcePath(r, namespace, name);
    const reuse =
      options.reuse && options.each
        ? options.reuse.list(
            ['get', settings.apiVersion, r.kind, namespace ?? '', name].join('\u0000'),
            options.each,
          )
        : undefined;
    if (!reuse) {
      const obj = (await this.#transport.request('GET', path, 'get', { allowNotFound: true })) as
        | KubeObject
        | undefined;
      return obj && options.each ? madeObject(obj, settings) : obj;
    }
    const body = (await this.#transport.request('GET', path, 'get', {
      allowNotFound: true,
      raw: true,
    })) as Buffer | undefined;
    if (body === undefined) {
      reuse.commit();
      return undefined;
    }
    try {
      const obj = readObject(body, settings, reuse);
      reuse.commit();
      return obj;
    } finally {
      PAGE_BUFFERS.give(body);
    }
  }
}
