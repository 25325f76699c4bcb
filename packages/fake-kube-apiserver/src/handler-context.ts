import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FakeCluster } from './cluster.ts';
import type { Route } from './route.ts';

export interface HandlerContext {
  readonly cluster: FakeCluster;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly route: Route;
  readonly query: URLSearchParams;
  readonly pathname: string;
  /** Open watch responses, ended when the cluster goes down or the server closes. */
  readonly watches: Set<ServerResponse>;
}

/** What the request log keeps of a handled request beyond its route. */
export interface Outcome {
  readonly status: number;
  readonly kind: string;
  readonly dryRun: boolean;
  readonly fieldManager?: string;
}
