import { describe, expect, it } from 'vitest';
import { hostMatches } from './route.ts';

describe('route', () => {
  it.each([
    ['*.apps.example.com', 'a.apps.example.com', true],
    ['*.apps.example.com', 'a.b.apps.example.com', true],
    ['*.apps.example.com', 'apps.example.com', false],
    ['www.example.com', 'www.example.com', true],
    ['www.example.com', 'api.example.com', false],
  ])('certificate CN %s matches host %s: %s', (cn, host, ok) => {
    expect(hostMatches(cn, host)).toBe(ok);
  });
});
