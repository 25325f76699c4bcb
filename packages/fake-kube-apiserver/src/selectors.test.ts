import { describe, expect, it } from 'vitest';
import { matchesFieldSelector, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { ApiError } from './status.ts';

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front', empty: '' };
  const check = (s: string) => parseLabelSelector(s)?.(labels);

  it('supports equality, inequality, sets and existence', () => {
    expect(check('app=web')).toBe(true);
    expect(check('app==web')).toBe(true);
    expect(check('app!=web')).toBe(false);
    expect(check('missing!=x')).toBe(true);
    expect(check('tier in (front, back)')).toBe(true);
    expect(check('tier notin (front)')).toBe(false);
    expect(check('missing notin (front)')).toBe(true);
    expect(check('app,!missing')).toBe(true);
    expect(check('empty=')).toBe(true);
    expect(check('app=web,tier in (back)')).toBe(false);
  });

  it('treats an empty selector as no selector and refuses nonsense', () => {
    expect(parseLabelSelector('')).toBeUndefined();
    expect(parseLabelSelector(null)).toBeUndefined();
    expect(() => parseLabelSelector('a b c')).toThrow(ApiError);
  });
});

describe('field selectors', () => {
  it('matches metadata.name and metadata.namespace, negated or not', () => {
    const selector = parseFieldSelector('metadata.name=a,metadata.namespace!=kube-system');
    expect(selector && matchesFieldSelector(selector, 'default', 'a')).toBe(true);
    expect(selector && matchesFieldSelector(selector, 'kube-system', 'a')).toBe(false);
    expect(selector && matchesFieldSelector(selector, 'default', 'b')).toBe(false);
  });

  it('refuses other fields with the real message', () => {
    expect(() => parseFieldSelector('status.phase=Running')).toThrow(
      'field label not supported: status.phase',
    );
  });
});
