import { describe, expect, it } from 'vitest';
import { parseImageTagFromRef } from './index.ts';

describe('parseImageTagFromRef', () => {
  it('maps ENV=REF items, repeated or whitespace-separated (the env variable)', () => {
    expect(parseImageTagFromRef(['stage=main', 'prod=v1 other=abc'])).toEqual(
      new Map([
        ['stage', 'main'],
        ['prod', 'v1'],
        ['other', 'abc'],
      ]),
    );
    expect(parseImageTagFromRef([])).toEqual(new Map());
  });

  it.each(['stage', 'a=b=c', '=ref', 'env='])('refuses %s', (item) => {
    expect(() => parseImageTagFromRef([item])).toThrow(/must be ENVIRONMENT=REF/);
  });
});
