import { pathToFileURL } from 'node:url';
import type { GraphQLSchema } from 'graphql';
import { loadEmbeddedEngine } from '../embedded/index.ts';
import { GqlBackendError, GqlQueryError } from './errors.ts';
import type { GitCommitInfo, GqlTransport, GraphqlResponse } from './types.ts';

/** The part of the embedded engine (`../embedded/`) this client uses. */
export interface EmbeddedEngineLike {
  readonly sha256: string;
  readonly gitCommit: GitCommitInfo | null;
  readonly schema: GraphQLSchema;
  execute(query: string, variables?: Record<string, unknown> | null): Promise<GraphqlResponse>;
}

export type EmbeddedEngineLoader = (source: string) => Promise<EmbeddedEngineLike>;

/**
 * Answers queries in-process from an app-interface directory or bundle.json,
 * with qontract-server's semantics (the engine's job). The bundle is loaded
 * once, so the run is pinned to it just like `/graphqlsha/<sha>`.
 */
export async function createEmbeddedTransport(
  source: string,
  options: { readonly sha?: string | undefined; readonly load?: EmbeddedEngineLoader } = {},
): Promise<GqlTransport> {
  const load = options.load ?? loadEmbeddedEngine;
  let engine: EmbeddedEngineLike;
  try {
    engine = await load(source);
  } catch (e) {
    throw new GqlBackendError(
      `cannot load app-interface from ${source}: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
  if (options.sha !== undefined && options.sha !== engine.sha256) {
    throw new GqlBackendError(
      `bundle ${options.sha} is not available: the embedded backend serves only ${engine.sha256} (${source})`,
    );
  }
  return engineTransport(engine, source);
}

/** A transport answering from an engine already loaded (`source` names it in errors and logs). */
export function engineTransport(engine: EmbeddedEngineLike, source: string): GqlTransport {
  return {
    endpoint: pathToFileURL(source).toString(),
    sha: engine.sha256,
    gitCommit: engine.gitCommit,
    async execute(query, variables, operationName) {
      try {
        return await engine.execute(query, variables ?? null);
      } catch (e) {
        throw new GqlQueryError(operationName, e instanceof Error ? e.message : String(e), {
          cause: e,
        });
      }
    },
    async close() {},
  };
}
