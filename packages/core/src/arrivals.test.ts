import { describe, expect, it } from 'vitest';
import { arrivals } from './arrivals.ts';

describe('arrivals', () => {
  it('hands values over in the order they came, those pushed before the reader started included', async () => {
    const channel = arrivals<string>();
    channel.push('a');
    const read: string[] = [];
    const reader = (async () => {
      for await (const v of channel) read.push(v);
    })();
    channel.push('b');
    await new Promise((r) => setTimeout(r, 5));
    // The reader has what came so far and waits for more.
    expect(read).toEqual(['a', 'b']);
    channel.push('c');
    channel.end();
    await reader;
    expect(read).toEqual(['a', 'b', 'c']);
  });

  it('ends a reader at once when nothing came', async () => {
    const channel = arrivals<number>();
    channel.end();
    const read: number[] = [];
    for await (const v of channel) read.push(v);
    expect(read).toEqual([]);
  });

  it('hands over what came before a failure, then throws it in the reader', async () => {
    const channel = arrivals<string>();
    channel.push('a');
    channel.push('b');
    channel.fail(new Error('the source broke'));
    const read: string[] = [];
    await expect(
      (async () => {
        for await (const v of channel) read.push(v);
      })(),
    ).rejects.toThrow('the source broke');
    expect(read).toEqual(['a', 'b']);
  });
});
