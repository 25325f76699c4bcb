import { isDeepStrictEqual } from 'node:util';
import { AbortStateTransactionError, type StateStore } from './types.ts';

/** The value a transaction callback sees and may replace. */
export class StateTransaction<T> {
  readonly key: string;
  #value: T | null;
  #changed = false;

  constructor(key: string, value: T | null) {
    this.key = key;
    this.#value = value;
  }

  get value(): T | null {
    return this.#value;
  }

  set value(value: T | null) {
    this.#value = value;
    this.#changed = true;
  }

  get changed(): boolean {
    return this.#changed;
  }
}

/**
 * The original's `State.transaction(key, value)`: reads the current value
 * (null when missing), runs `fn`, then writes the transaction's value when
 * `fn` assigned one that differs from the current value, or else `value` when
 * given and different. AbortStateTransactionError from `fn` skips the write;
 * any other error propagates without writing. There is no locking, as upstream.
 */
export async function stateTransaction<T, R = void>(
  store: StateStore,
  key: string,
  fn: (tx: StateTransaction<T>) => R | Promise<R>,
  value?: T | null,
): Promise<R | undefined> {
  const current = await store.get<T | null>(key, null);
  const tx = new StateTransaction<T>(key, current);
  let result: R;
  try {
    result = await fn(tx);
  } catch (e) {
    if (e instanceof AbortStateTransactionError) return undefined;
    throw e;
  }
  if (tx.changed && !isDeepStrictEqual(tx.value, current)) {
    await store.set(key, tx.value);
  } else if (value !== undefined && value !== null && !isDeepStrictEqual(value, tx.value)) {
    await store.set(key, value);
  }
  return result;
}
