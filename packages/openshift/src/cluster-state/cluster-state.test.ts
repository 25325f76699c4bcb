import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../cluster/kube-client.ts';
import { ClusterState } from './cluster-state.ts';

const cm = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'x' },
});

describe('ClusterState revisions', () => {
  it('changes with the order of the objects, and comes back to nothing earlier', () => {
    let n = 0;
    const state = new ClusterState('c1', () => ++n);
    const [a, b] = [cm('a'), cm('b')];
    const first = state.revision('s', [a, b], 1);
    expect(state.revision('s', [a, b], 2)).toBe(first);
    const swapped = state.revision('s', [b, a], 3);
    expect(swapped).not.toBe(first);
    expect(state.revision('s', [a, b], 4)).not.toBe(first);
    // An equal object that is not the same one is another revision.
    expect(state.revision('s', [{ ...a }, b], 5)).not.toBe(first);
  });
});
