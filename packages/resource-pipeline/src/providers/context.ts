import { QontractError, type SecretReader } from '@qontract/core';
import type { LoadedTexts } from '@qontract/openshift/parse-pool';
import type { DesiredCacheRun, HelperCall } from '../desired-cache.ts';

/** A resource could not be built; registered as an error for its namespace, the others go on. */
export class FetchResourceError extends QontractError {}

export type TemplateType = 'jinja2' | 'extracurlyjinja2';

/** Renders a template body (a resource-template or templated prometheus-rule). */
export interface TemplateRenderer {
  (
    body: string,
    options: {
      type: TemplateType;
      path: string;
      variables: Record<string, unknown>;
      /** Told every lookup the render makes, and whether it reads the clock (the desired cache). */
      record?: { call(call: HelperCall): void; clock(): void };
    },
  ): Promise<string>;
  /** Makes a recorded lookup again; without it templates are rendered on every run. */
  readonly replay?: (call: HelperCall) => Promise<string>;
}

/** What every provider builds with: the run's secrets, renderer, settings and caches. */
export interface ProviderContext {
  /** The `qontract.integration` value and version of the pipeline. */
  readonly integration: string;
  readonly integrationVersion: string;
  readonly secrets: SecretReader;
  readonly render: TemplateRenderer;
  /** app-interface settings `repoUrl`, for PrometheusRule `html_url`. */
  readonly repoUrl: string;
  /** What earlier runs of this process built (loop mode); none: everything is built. */
  readonly cache?: DesiredCacheRun | undefined;
  /** The bundle of this run (pinned GraphQL endpoint), if known. */
  readonly bundleSha?: string | undefined;
  /** Resource files being loaded on worker threads (large runs); the others are loaded here. */
  readonly loaded?: LoadedTexts | undefined;
}

export const DEFAULT_REPO_URL = 'https://gitlab.cee.redhat.com/service/app-interface';
