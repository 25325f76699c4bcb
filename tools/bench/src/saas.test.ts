import { describe, expect, it } from 'vitest';
import { runSaasScenario } from './saas.ts';

describe('openshift-saas-deploy keeps its peers as busy as --thread-pool-size allows', () => {
  it('resolves the refs of independent saas files thread-pool-size at a time, requests unchanged', async () => {
    // 4 saas files of 4 targets, two refs each (`main` and the sha it points
    // at): 8 independent ref resolutions. Counted at the fakes, not timed: the
    // latency only keeps each request in flight long enough for the next to
    // arrive. A pool of targets (4 at a time: one saas file, whose targets
    // share its two resolutions, its file and its image) never had more than
    // 2 requests in flight at GitHub.
    const r = await runSaasScenario({
      kind: 'saas',
      scale: { saasFiles: 4, targets: 4, clusters: 2, namespaces: 2 },
      latencyMs: 50,
      concurrency: 4,
    });
    expect(r.exitCode).toBe(0);
    expect(r.inFlight.github.max).toBe(4);
    expect(r.inFlight.registry.max).toBeLessThanOrEqual(4);
    // The same requests as before: one per distinct ref, file and image.
    const { commits, contents, manifests } = r.lowerBound;
    expect([r.github, r.manifests, r.writes]).toEqual([
      { commits, contents, other: 0 },
      manifests,
      0,
    ]);
  }, 120_000);
});
