/**
 * Freezes a value and everything in it, so that data shared between readers
 * (a memoized answer, a cached object) cannot be changed by one of them: a
 * write fails where it is made (ES modules are strict) instead of going stale
 * for the others. A frozen object is taken as frozen all the way down.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
