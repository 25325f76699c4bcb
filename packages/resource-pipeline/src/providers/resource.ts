/** The `resource` provider: a file as the original parses it; the other providers build through `fromContent`. */
import { errorMessage } from '@qontract/core';
import {
  dictGet,
  isDict,
  OpenshiftResource,
  type PyDict,
  type PyObject,
  parseResource,
  ResourceDataError,
  YamlError,
} from '@qontract/openshift';
import type { LoadedResource } from '@qontract/openshift/parse-pool';
import type { BuiltObject } from '../desired-cache.ts';
import { fields, type OpenshiftResourceData } from '../model.ts';
import { FetchResourceError, type ProviderContext } from './context.ts';
import { addHtmlUrls, alertmanagerKey, checkAlertmanagerKey } from './prometheus-rule.ts';

/** A resource file used as it is, and how it is read; undefined for the other providers. */
export function plainFile(
  r: OpenshiftResourceData,
): { file: { path: string; content: string }; options: ContentOptions } | undefined {
  const f = fields(r);
  if (f.provider === 'resource') {
    return {
      file: requiredFile(r),
      options: { validateJson: Boolean(f.validate_json), alertmanagerKey: alertmanagerKey(r) },
    };
  }
  if (f.provider === 'prometheus-rule' && (f.type ?? 'resource') === 'resource') {
    return { file: requiredFile(r), options: {} };
  }
  return undefined;
}

export function requiredFile(r: OpenshiftResourceData): { path: string; content: string } {
  const file = fields(r).path;
  if (!file) throw new FetchResourceError(`${fields(r).provider} without a resource path`);
  return file;
}

/**
 * Parses a (rendered) resource file and builds its object, as the `resource` provider does.
 * `rendered`: the content is a template's output, which may hold secrets.
 */
export function fromContent(
  content: string,
  path: string,
  pc: ProviderContext,
  options: ContentOptions,
  /** The caller changes the body afterwards: it gets its own copy. */
  mutable = false,
): OpenshiftResource {
  if (!pc.cache) return buildFromContent(content, path, pc, options).resource;
  const variant = `${pc.cache.variantPrefix([
    pc.integration,
    pc.integrationVersion,
    pc.repoUrl,
    options.validateJson ?? false,
    options.alertmanagerKey ?? null,
    options.rendered ?? false,
  ])}${path}`;
  return pc.cache.object(content, variant, () => buildFromContent(content, path, pc, options), {
    mutable,
  });
}

export interface ContentOptions {
  validateJson?: boolean;
  alertmanagerKey?: string | undefined;
  rendered?: boolean;
  /** The content as a worker loaded it (`parseResource`'s body, decoded on a miss, and its sha). */
  loaded?: LoadedResource | undefined;
}

function buildFromContent(
  content: string,
  path: string,
  pc: ProviderContext,
  options: ContentOptions,
): BuiltObject {
  // parseResource refuses anything but a mapping and drops a top-level `$schema`.
  let body: PyObject | PyDict;
  try {
    body = options.loaded ? options.loaded.body() : parseResource(content, 'yaml');
  } catch (e) {
    throw new FetchResourceError(
      `Could not parse data. Skipping resource: ${path}: ${parseFailure(e, options.rendered === true)}`,
    );
  }
  if (options.validateJson) {
    const data = dictGet(body, 'data');
    if (isDict(data)) {
      for (const key of Object.keys(data)) {
        const value = dictGet(data, key);
        try {
          JSON.parse(String(value));
        } catch {
          throw new FetchResourceError(`invalid json in ${path} under ${key}`);
        }
      }
    }
  }
  if (options.alertmanagerKey) checkAlertmanagerKey(body, options.alertmanagerKey, path);
  // The worker's sha is that of the body as loaded: not of one changed here.
  let sha256sum = options.loaded?.sha256sum;
  if (dictGet(body, 'kind') === 'PrometheusRule') {
    addHtmlUrls(body, `${pc.repoUrl}/blob/master/resources${path}`);
    sha256sum = undefined;
  }
  try {
    const resource = new OpenshiftResource(body, pc.integration, pc.integrationVersion, {
      errorDetails: path,
    });
    return { resource, sha256sum };
  } catch (e) {
    throw new FetchResourceError(errorMessage(e));
  }
}

/**
 * Why a resource file did not parse. The original says only "Could not parse
 * data"; the reason and the line (YamlError carries them) tell the author what
 * to fix. Rendered text may hold secrets from the template's lookups, so its
 * quoted fragments (alias, tag or scalar text) are left out.
 */
function parseFailure(e: unknown, rendered: boolean): string {
  if (e instanceof ResourceDataError) return e.message.slice(e.pythonError.length + 2);
  if (!(e instanceof YamlError)) return errorMessage(e);
  if (!rendered) return `invalid YAML: ${e.message}`;
  return `invalid YAML in the rendered template: ${withoutQuotedText(e.message)}`;
}

/** Masks quoted fragments of a message, except token names (`'<stream-end>'`) and single characters. */
function withoutQuotedText(message: string): string {
  return message.replace(/(["'])((?:\\.|(?!\1).)*)\1/g, (whole, quote: string, inner: string) =>
    inner.length <= 1 || /^<[-a-z]+>$/.test(inner) ? whole : `${quote}…${quote}`,
  );
}
