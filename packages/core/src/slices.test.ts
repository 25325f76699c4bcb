import { describe, expect, it } from 'vitest';
import { EventLoopSlices } from './slices.ts';

/** Steps that only await settled promises, pausing where `slices` says; the step at which `ran` turned true. */
async function stepsUntil(slices: EventLoopSlices | undefined, steps: number, ran: () => boolean) {
  let seenAt: number | undefined;
  for (let i = 0; i < steps; i++) {
    await Promise.resolve(i);
    if (seenAt === undefined && ran()) seenAt = i;
    const pause = slices?.due();
    if (pause) await pause;
  }
  return seenAt;
}

describe('EventLoopSlices', () => {
  it('lets the event loop run between slices of work that never waits', async () => {
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    const seenAt = await stepsUntil(new EventLoopSlices(0), 1_000, () => ran);
    expect(seenAt).toBeDefined();
    expect(seenAt).toBeLessThan(10);
  });

  it('without it, nothing else runs until the loop ends', async () => {
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    expect(await stepsUntil(undefined, 1_000, () => ran)).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toBe(true);
  });

  it('asks for no pause before its slice has used its time, and one pause for every caller', async () => {
    const slices = new EventLoopSlices(60_000);
    expect(slices.due()).toBeUndefined();
    const now = new EventLoopSlices(0);
    const first = now.due();
    expect(first).toBeInstanceOf(Promise);
    expect(now.due()).toBe(first);
    await first;
    const next = now.due();
    expect(next).not.toBe(first);
    await next;
  });
});
