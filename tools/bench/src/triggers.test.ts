import { describe, expect, it } from 'vitest';
import { runTriggerScenario } from './triggers.ts';

describe('the triggers keep their peers as busy as --thread-pool-size allows, no busier', () => {
  // Counted at the fakes, not timed: the latency only keeps each request in
  // flight long enough for the next one to arrive.
  const scale = { saasFiles: 8, targets: 4, clusters: 2, namespaces: 2 };

  it('moving-commits resolves refs thread-pool-size at a time, and reads state as many at a time', async () => {
    // 8 saas files: 16 distinct (repository, ref) resolutions. A pool of
    // targets (taken before the run's ref cache) held places for targets
    // waiting on another's resolution: GitHub saw 2 of 4.
    const r = await runTriggerScenario({
      kind: 'trigger',
      trigger: 'moving-commits',
      scale,
      changed: 0,
      latencyMs: 50,
      concurrency: 4,
    });
    expect(r.exitCode).toBe(0);
    expect(r.inFlight.github.max).toBe(4);
    expect(r.inFlight.state.max).toBeLessThanOrEqual(4);
    expect(r.requests.github).toBe(r.lowerBound.github);
    expect(r.requests.state).toBe(r.lowerBound.state);
  }, 180_000);

  it('configs reads its 32 state keys at most thread-pool-size at a time', async () => {
    // Unbounded, every key was asked for at once (the S3 client's 50 sockets).
    const r = await runTriggerScenario({
      kind: 'trigger',
      trigger: 'configs',
      scale,
      changed: 0,
      latencyMs: 50,
      concurrency: 4,
    });
    expect(r.exitCode).toBe(0);
    expect(r.inFlight.state.max).toBe(4);
    expect(r.requests.state).toBe(r.lowerBound.state);
  }, 180_000);
});
