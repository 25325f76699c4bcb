import { type PyJsonModel, pyJsonDumps } from '@qontract/pycompat';
import pLimit from 'p-limit';
import { StateKeyExistsError, StateKeyNotFoundError, type StateStore } from './types.ts';

/** Parallel reads in `getAll`; enough to hide S3 latency without flooding the bucket. */
const GET_ALL_CONCURRENCY = 10;

/** Where an object lives and what it holds, as a backend stores it. */
export interface StoredObject {
  readonly text: string;
  readonly metadata: Record<string, string>;
}

/**
 * The original's State semantics over any object store: keys live at
 * `state/<integration>/<key>` (`state/<key>` for an empty integration) and
 * hold Python `json.dumps(value, sort_keys=True)` text. Backends only move
 * bytes; everything upstream-visible is decided here, once.
 */
export abstract class JsonStateStore implements StateStore {
  readonly integration: string;
  /** `state/<integration>`, or `state` for an empty integration, as upstream. */
  readonly statePath: string;

  constructor(integration: string) {
    this.integration = integration;
    this.statePath = integration ? `state/${integration}` : 'state';
  }

  /** The object at a full key, or undefined when there is none. */
  protected abstract readObject(objectKey: string): Promise<StoredObject | undefined>;
  protected abstract writeObject(objectKey: string, object: StoredObject): Promise<void>;
  protected abstract deleteObject(objectKey: string): Promise<void>;
  /** Full keys of every object whose key starts with `prefix`. */
  protected abstract listObjectKeys(prefix: string): Promise<string[]>;
  protected abstract headObject(
    objectKey: string,
  ): Promise<{ exists: boolean; metadata: Record<string, string> }>;

  objectKey(key: string): string {
    return `${this.statePath}/${key}`;
  }

  async exists(key: string): Promise<boolean> {
    return (await this.headObject(this.objectKey(key))).exists;
  }

  head(key: string): Promise<{ exists: boolean; metadata: Record<string, string> }> {
    return this.headObject(this.objectKey(key));
  }

  async get<T = unknown>(key: string, ...defaultValue: [T?]): Promise<T> {
    const stored = await this.readObject(this.objectKey(key));
    if (stored !== undefined) {
      try {
        return JSON.parse(stored.text) as T;
      } catch {
        // Upstream treats a body that is not JSON like a missing key.
      }
    }
    if (defaultValue.length > 0) return defaultValue[0] as T;
    throw new StateKeyNotFoundError(`[state] key ${key} not found in ${this.statePath}`);
  }

  async set(key: string, value: unknown, metadata: Record<string, string> = {}): Promise<void> {
    await this.#write(key, value, metadata, undefined);
  }

  async add(
    key: string,
    value: unknown = null,
    options: { force?: boolean; metadata?: Record<string, string>; model?: PyJsonModel } = {},
  ): Promise<void> {
    if (!options.force && (await this.exists(key))) {
      throw new StateKeyExistsError(`[state] key ${key} already exists in ${this.statePath}`);
    }
    await this.#write(key, value, options.metadata ?? {}, options.model);
  }

  async #write(
    key: string,
    value: unknown,
    metadata: Record<string, string>,
    model: PyJsonModel | undefined,
  ): Promise<void> {
    await this.writeObject(this.objectKey(key), {
      text: pyJsonDumps(value, { sortKeys: true, ...(model ? { model } : {}) }),
      metadata,
    });
  }

  async ls(): Promise<string[]> {
    const keys = await this.listObjectKeys(`${this.statePath}/`);
    return keys.map((k) => k.slice(this.statePath.length));
  }

  async getAll(path: string): Promise<Record<string, unknown>> {
    // Upstream selects with a bare prefix match (`/ab/x` matches path `a`) and
    // strips `/<path>/` where present; kept so results match key for key.
    const selected = (await this.ls()).filter((k) => k.startsWith(`/${path}`));
    const prefix = `/${path}/`;
    const limit = pLimit(GET_ALL_CONCURRENCY);
    const values = await Promise.all(selected.map((k) => limit(() => this.get(k.slice(1)))));
    const out: Record<string, unknown> = {};
    selected.forEach((k, i) => {
      out[k.startsWith(prefix) ? k.slice(prefix.length) : k] = values[i];
    });
    return out;
  }

  async rm(key: string): Promise<void> {
    if (!(await this.exists(key))) {
      throw new StateKeyNotFoundError(`[state] key ${key} not found in ${this.statePath}`);
    }
    await this.deleteObject(this.objectKey(key));
  }
}
