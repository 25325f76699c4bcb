// biome-ignore-all lint/suspicious/noTemplateCurlyInString: saas parameters reference each other as ${NAME} inside plain strings
import { describe, expect, it } from 'vitest';
import { normalizeParameters, substituteParameters, targetParameters } from './parameters.ts';

describe('targetParameters: precedence', () => {
  it('saas file < resource template < target, environment lowest, secrets above their layer', () => {
    const p = targetParameters({
      environment: { A: 'env', B: 'env', C: 'env', D: 'env', E: 'env' },
      environmentSecrets: { E: 'env-secret' },
      saasFile: { B: 'saas', C: 'saas', D: 'saas' },
      saasFileSecrets: { D: 'saas-secret' },
      resourceTemplate: { C: 'rt', D: 'rt', F: 'rt' },
      target: { D: 'target', G: 'target' },
      targetSecrets: { G: 'target-secret' },
    });
    expect(p).toEqual({
      A: 'env',
      B: 'saas',
      C: 'rt',
      D: 'target',
      E: 'env-secret',
      F: 'rt',
      G: 'target-secret',
    });
    // a key keeps the position of its first occurrence
    expect(Object.keys(p)).toEqual(['A', 'B', 'C', 'D', 'E', 'F', 'G']);
  });

  it('normalizes non-secret values unless adjust is false (helm)', () => {
    const layers = { saasFile: { T: true, F: false, N: 2, M: { b: 1, a: [1, 'x'] }, Z: null } };
    expect(targetParameters(layers)).toEqual({
      T: 'true',
      F: 'false',
      N: 2,
      M: '{"a": [1, "x"], "b": 1}',
      Z: null,
    });
    expect(targetParameters(layers, { adjust: false })).toEqual(layers.saasFile);
  });
});

describe('normalizeParameters', () => {
  it('writes maps with Python json.dumps (sorted keys, ", " and ": ", ASCII escapes)', () => {
    expect(normalizeParameters({ X: { é: 'ü', a: true } })).toEqual({
      X: '{"a": true, "\\u00e9": "\\u00fc"}',
    });
  });
});

describe('substituteParameters: one ${X} pass', () => {
  it.each([
    [
      'replaces a reference',
      { HOST: 'h.example.com', URL: 'https://${HOST}/x' },
      { HOST: 'h.example.com', URL: 'https://h.example.com/x' },
    ],
    ['replaces every occurrence', { A: 'a', B: '${A}-${A}' }, { A: 'a', B: 'a-a' }],
    ['leaves unknown references', { A: '${NOPE}' }, { A: '${NOPE}' }],
    ['skips non-string values as replacements', { N: 3, A: '${N}' }, { N: 3, A: '${N}' }],
    // order-dependent: A is replaced into B before B's own value is used for C
    [
      'sees earlier replacements (forward chain)',
      { A: 'a', B: '${A}b', C: '${B}c' },
      { A: 'a', B: 'ab', C: 'abc' },
    ],
    [
      'later keys reach earlier values too',
      { C: '${B}c', B: '${A}b', A: 'a' },
      { C: 'abc', B: 'ab', A: 'a' },
    ],
    // one pass, no fixpoint: a self-reference grows once and stays unresolved
    ['no recursion', { A: '${B}', B: '${A}x' }, { A: '${B}x', B: '${B}xx' }],
    ['no $X or {X} forms', { A: 'a', B: '$A {A} $(A)' }, { A: 'a', B: '$A {A} $(A)' }],
  ])('%s', (_, input, expected) => {
    expect(substituteParameters(input)).toEqual(expected);
  });
});
