import type { Config } from '../config.ts';
import type { SecretRedactor } from '../redaction.ts';
import {
  SecretNotFoundError,
  type SecretPathRef,
  type SecretReader,
  type SecretRef,
} from './types.ts';

/**
 * The original's config-file secret reader, used when app-interface settings
 * say `vault: false`: `path` is split on `/` and walked through config.toml;
 * `format` and `version` are ignored (no base64 decoding), as upstream does.
 */
export class ConfigSecretReader implements SecretReader {
  readonly #raw: Readonly<Record<string, unknown>>;
  readonly #redactor: SecretRedactor | undefined;

  constructor(config: Pick<Config, 'raw'>, redactor?: SecretRedactor) {
    this.#raw = config.raw;
    this.#redactor = redactor;
  }

  async read(ref: SecretRef): Promise<string> {
    const table = this.#table(ref.path);
    const value = table[ref.field];
    if (value === undefined || value === null || typeof value === 'object') {
      throw new SecretNotFoundError(
        `key not found in config file ${ref.path}: field '${ref.field}' is missing`,
      );
    }
    const text = String(value);
    this.#redactor?.add(text);
    return text;
  }

  async readAll(ref: SecretPathRef): Promise<Record<string, string>> {
    const table = this.#table(ref.path);
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(table)) {
      if (v === null || typeof v === 'object') continue;
      out[k] = String(v);
      this.#redactor?.add(out[k]);
    }
    return out;
  }

  #table(path: string): Record<string, unknown> {
    let cur: unknown = this.#raw;
    for (const part of path.split('/')) {
      if (cur === null || typeof cur !== 'object' || !(part in cur)) {
        throw new SecretNotFoundError(`secret ${path} not found in config file: no key '${part}'`);
      }
      cur = (cur as Record<string, unknown>)[part];
    }
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) {
      throw new SecretNotFoundError(`secret ${path} not found in config file: not a table`);
    }
    return cur as Record<string, unknown>;
  }
}
