import { describe, expect, it } from 'vitest';
import { QontractError } from './errors.ts';
import { LoopScope, parseTuning } from './loop-scope.ts';

describe('parseTuning', () => {
  it('has the defaults when nothing is set (an empty value is unset)', () => {
    expect(parseTuning({ QONTRACT_PARSE_THREADS: '' })).toEqual({
      loopCaches: true,
      listReuse: true,
      desiredCache: true,
      parseThreads: undefined,
      clusterRetryUnitMs: undefined,
    });
  });

  it('QONTRACT_LOOP_CACHES=off turns every loop cache off at once', () => {
    expect(parseTuning({ QONTRACT_LOOP_CACHES: 'off' })).toMatchObject({
      loopCaches: false,
      listReuse: false,
      desiredCache: false,
    });
    expect(parseTuning({ QONTRACT_LIST_REUSE: 'off' })).toMatchObject({
      loopCaches: true,
      listReuse: false,
      desiredCache: true,
    });
  });

  it.each([
    [{ QONTRACT_LIST_REUSE: 'yes' }, `QONTRACT_LIST_REUSE must be 'on' or 'off', got "yes"`],
    [
      { QONTRACT_PARSE_THREADS: 'two' },
      'QONTRACT_PARSE_THREADS must be a whole number of threads (0: none), got "two"',
    ],
    [{ QONTRACT_LOOP_CACHES: 'false' }, `QONTRACT_LOOP_CACHES must be 'on' or 'off', got "false"`],
  ])('refuses %j, naming the variable', (env, message) => {
    expect(() => parseTuning(env)).toThrow(new QontractError(message));
  });
});

describe('LoopScope', () => {
  it('keeps what its runs share for the loop, and closes it once when the loop ends', () => {
    const loop = new LoopScope({ repeats: true, env: {} });
    let closed = 0;
    const made = loop.keep(
      'k',
      () => ({ n: 1 }),
      () => closed++,
    );
    expect(loop.keep('k', () => ({ n: 2 }))).toBe(made);
    expect(loop.peek('k')).toBe(made);
    expect(loop.repeatCache('r', () => 'listed')).toBe('listed');
    loop.close();
    loop.close();
    expect(closed).toBe(1);
    expect(loop.peek('k')).toBeUndefined();
  });

  it('a single run keeps no repeat cache; with the loop caches off, no cache at all', () => {
    const single = new LoopScope({ repeats: false, env: {} });
    expect(single.repeatCache('r', () => 'listed')).toBeUndefined();
    expect(single.cache('c', () => 'desired')).toBe('desired');
    const off = new LoopScope({ repeats: true, env: { QONTRACT_LOOP_CACHES: 'off' } });
    expect(off.repeatCache('r', () => 'listed')).toBeUndefined();
    expect(off.cache('c', () => 'desired')).toBeUndefined();
    // What the runs need to work (watch caches) is kept whatever the tuning.
    expect(off.keep('w', () => 'watches')).toBe('watches');
  });
});
