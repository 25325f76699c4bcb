import { describe, expect, it } from 'vitest';
import { desiredOpenshiftServiceaccountTokens } from './desired.ts';

describe('desiredOpenshiftServiceaccountTokens', () => {
  it.each([
    { namespaces: [], expected: [] },
    {
      namespaces: [
        { name: 'b', cluster: { name: 'c2' } },
        { name: 'a', cluster: { name: 'c1' } },
      ],
      expected: [
        { cluster: 'c1', namespace: 'a' },
        { cluster: 'c2', namespace: 'b' },
      ],
    },
  ])('builds the desired state from $namespaces.length namespaces', ({ namespaces, expected }) => {
    expect(desiredOpenshiftServiceaccountTokens({ namespaces })).toEqual(expected);
  });
});
