/**
 * Freezes a value and everything in it, so that data shared between readers
 * (a memoized answer, a cached object) cannot be changed by one of them: a
 * write fails where it is made (ES modules are strict) instead of going stale
 * for the others. A frozen object is taken as frozen all the way down.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    // Index and key loops: `Object.values` builds an array per object, and a
    // cold run freezes the bodies of tens of thousands of desired objects.
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
    } else {
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) deepFreeze(record[key]);
    }
  }
  return value;
}
