import type { PyJsonModel } from '@qontract/pycompat';
import { QontractError } from '../errors.ts';

/**
 * The original's key/value state (`reconcile/utils/state.py`): JSON values
 * under `state/<integration>/<key>`, written with Python `json.dumps(sort_keys=True)`.
 */
export interface StateStore {
  /** Whether `key` exists. */
  exists(key: string): Promise<boolean>;
  /** The value at `key`; `KeyError`-like StateKeyNotFoundError when absent and no default is given. */
  get<T = unknown>(key: string, defaultValue?: T): Promise<T>;
  /** Writes `value` at `key` (overwrites). */
  set(key: string, value: unknown, metadata?: Record<string, string>): Promise<void>;
  /**
   * Fails when `key` exists unless `force`. `model` writes values plain JSON
   * cannot tell apart (a Python float `99.0`), as the original stores them.
   */
  add(
    key: string,
    value: unknown,
    options?: { force?: boolean; metadata?: Record<string, string>; model?: PyJsonModel },
  ): Promise<void>;
  /** Keys below the integration prefix, each starting with `/` as upstream returns them. */
  ls(): Promise<string[]>;
  /** `{key relative to path: value}` for keys under `/{path}`. */
  getAll(path: string): Promise<Record<string, unknown>>;
  /** Removes `key`; StateKeyNotFoundError when absent. */
  rm(key: string): Promise<void>;
  /** Whether `key` exists, and the metadata stored with it (upstream `head`). */
  head(key: string): Promise<{ exists: boolean; metadata: Record<string, string> }>;
}

export class StateKeyNotFoundError extends QontractError {}
export class StateInaccessibleError extends QontractError {}

/** `add` without `force` found the key already there (upstream raises KeyError). */
export class StateKeyExistsError extends QontractError {}

/** Thrown inside `stateTransaction`'s callback to leave the state untouched. */
export class AbortStateTransactionError extends Error {
  constructor(message = 'state transaction aborted') {
    super(message);
    this.name = 'AbortStateTransactionError';
  }
}
