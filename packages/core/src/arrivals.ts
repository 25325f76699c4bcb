import { EventEmitter, on } from 'node:events';

/** A channel of values handed over as they become ready, read with `for await`. */
export interface Arrivals<T> extends AsyncIterable<T> {
  push(value: T): void;
  /** No more values: the reader gets what was pushed before, then its loop ends. */
  end(): void;
  /** The source failed: the reader gets what was pushed before, then `error` is thrown in its loop. */
  fail(error: unknown): void;
}

/**
 * Values handed over as they become ready (a cluster once its read has ended),
 * for one reader that goes on with each in the order it came, while the rest
 * are still on their way. Values pushed before the reader starts are kept for it.
 */
export function arrivals<T>(): Arrivals<T> {
  const emitter = new EventEmitter();
  const events = on(emitter, 'value', { close: ['end'] });
  return {
    push: (value) => {
      emitter.emit('value', value);
    },
    end: () => {
      emitter.emit('end');
    },
    fail: (error) => {
      emitter.emit('error', error);
    },
    async *[Symbol.asyncIterator]() {
      for await (const [value] of events) yield value as T;
    },
  };
}
