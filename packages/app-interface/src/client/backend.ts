import { dirname, isAbsolute, resolve } from 'node:path';
import { GqlBackendError } from './errors.ts';

/** Which backend `[graphql] server` selects. */
export type BackendSpec =
  | { readonly kind: 'remote'; readonly url: string }
  | { readonly kind: 'embedded'; readonly source: string };

/**
 * `http://` / `https://` selects a qontract-server. `file://PATH` or
 * `file:PATH` selects the embedded engine, PATH being an app-interface
 * directory (with `data/`, `resources/`, `graphql-schemas/schema.yml`) or a
 * `bundle.json`; a relative PATH is resolved against the config file's
 * directory (the current directory for in-memory configs), so
 * `file://app-interface` next to config.toml works. `file:///abs/path` is an
 * absolute path.
 */
export function parseBackendSpec(server: string, configSourcePath: string): BackendSpec {
  if (/^https?:\/\//i.test(server)) return { kind: 'remote', url: server };
  const m = /^file:(?:\/\/)?(.+)$/i.exec(server);
  if (m?.[1]) {
    const path = decodeURI(m[1]);
    const base = configSourcePath ? dirname(configSourcePath) : process.cwd();
    return { kind: 'embedded', source: isAbsolute(path) ? path : resolve(base, path) };
  }
  throw new GqlBackendError(
    '[graphql] server must be an http(s):// URL of a qontract-server, or file://PATH of an ' +
      'app-interface directory or bundle.json',
  );
}
