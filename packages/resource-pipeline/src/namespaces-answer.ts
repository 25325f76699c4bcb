import type { GqlClient } from '@qontract/app-interface';
import type { RunContext } from '@qontract/core';
import type { NamespaceData } from './model.ts';
import { OpenshiftResourcesNamespacesDocument } from './namespaces.generated.ts';

/** The namespaces answer of a loop's last run of a pipeline, with the bundle it came from. */
interface LastAnswer {
  last?: { readonly key: string; readonly namespaces: readonly NamespaceData[] };
}

/**
 * The namespaces and their resources. The answer for one bundle never changes,
 * so a run pinned to the bundle of the previous run (loop mode, unchanged
 * app-interface) reuses its decoded answer instead of downloading, decoding and
 * checking the largest query again. Never when the bundle is not known (no
 * `--gql-sha-url`) or the queried schemas are to be dumped. `reused` is known
 * at once; `fetch()` sends the query when the answer is not reused.
 */
export function namespacesOf(
  ctx: RunContext,
  gql: GqlClient,
  identity: string,
): {
  reused: boolean;
  fetch: () => Promise<{ namespaces: readonly NamespaceData[]; kept: boolean }>;
} {
  const answers =
    gql.sha !== undefined && !ctx.globals.dumpSchemas && ctx.loop.tuning.desiredCache
      ? ctx.loop.cache<LastAnswer>(`pipeline:answer:${identity}`, () => ({}))
      : undefined;
  // The schema check of the query depends on the integration and on --validate-schemas.
  const key = `${gql.sha}\u0000${ctx.integration}\u0000${ctx.globals.validateSchemas}`;
  const last = answers?.last;
  if (last?.key === key) {
    const namespaces = last.namespaces;
    return {
      reused: true,
      fetch: async () => ({ namespaces, kept: true }),
    };
  }
  const fetch = async () => {
    const { namespaces } = await gql.query(OpenshiftResourcesNamespacesDocument);
    if (answers) answers.last = { key, namespaces: namespaces ?? [] };
    return { namespaces: namespaces ?? [], kept: answers !== undefined };
  };
  return { reused: false, fetch };
}
