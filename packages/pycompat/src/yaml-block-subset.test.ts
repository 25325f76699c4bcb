import { describe, expect, it } from 'vitest';
import { type BlockBuilders, readBlockSubset } from './yaml-block-subset.ts';

/** Builders that spell out what the reader saw, so its calls can be checked. */
const SPELL: BlockBuilders<unknown> = {
  plain: (text) => ({ plain: text }),
  quoted: (text) => ({ quoted: text }),
  mapping: (pairs) => ({ mapping: pairs.map(([k, v]) => [k, v]) }),
  sequence: (items) => ({ sequence: items }),
};

const read = (text: string) => readBlockSubset(text, SPELL);

describe('readBlockSubset', () => {
  it('hands every pair to the mapping builder in document order, repeated keys included', () => {
    expect(read('---\nb: 1\na: x # comment\nb: "two"\n')).toEqual({
      mapping: [
        [{ plain: 'b' }, { plain: '1' }],
        [{ plain: 'a' }, { plain: 'x' }],
        [{ plain: 'b' }, { quoted: 'two' }],
      ],
    });
  });

  it('reads nested blocks, sequences at their key indentation and empty nodes as the plain ""', () => {
    expect(read('a:\n- x\n- k: 1\n  l:\nb:\n  c: []\n')).toEqual({
      mapping: [
        [
          { plain: 'a' },
          {
            sequence: [
              { plain: 'x' },
              {
                mapping: [
                  [{ plain: 'k' }, { plain: '1' }],
                  [{ plain: 'l' }, { plain: '' }],
                ],
              },
            ],
          },
        ],
        [{ plain: 'b' }, { mapping: [[{ plain: 'c' }, { sequence: [] }]] }],
      ],
    });
  });

  it("reads single quotes with '' and one-line flow collections of plain scalars", () => {
    expect(read("a: 'it''s # here'\nb: {x: 1, y: z}\nc: [p, q]\n")).toEqual({
      mapping: [
        [{ plain: 'a' }, { quoted: "it's # here" }],
        [
          { plain: 'b' },
          {
            mapping: [
              [{ plain: 'x' }, { plain: '1' }],
              [{ plain: 'y' }, { plain: 'z' }],
            ],
          },
        ],
        [{ plain: 'c' }, { sequence: [{ plain: 'p' }, { plain: 'q' }] }],
      ],
    });
  });

  it('reads double-quoted escapes into one string; surrogates and unknown escapes are not its', () => {
    expect(read('a: "{\\"k\\":\\t1}\\n\\x41\\u00e9\\U0001F600\\N\\/\\\\"\n')).toEqual({
      mapping: [[{ plain: 'a' }, { quoted: '{"k":\t1}\nAé😀\u0085/\\' }]],
    });
    expect(read('"k\\"ey": v\n')).toEqual({ mapping: [[{ quoted: 'k"ey' }, { plain: 'v' }]] });
    for (const sequence of ['\\uD83D\\uDE00', '\\q', '\\x4', '\\U00110000', '\\xZZ']) {
      expect(read(`a: "${sequence}"\n`)).toBeUndefined();
    }
    expect(read('a: "open\\"\n')).toBeUndefined();
  });

  it('reads literal and folded block scalars from the lines as written', () => {
    const text = [
      'a: |',
      '  line one # not a comment',
      '',
      '    indented',
      '  ---',
      'b: >- # folded, stripped',
      '  x',
      '  y',
      '',
      '  z',
      '',
      'c:',
      '- |-',
      '  item',
      '- k: >',
      '    v',
      'd: 1',
      '',
    ].join('\n');
    expect(read(text)).toEqual({
      mapping: [
        [{ plain: 'a' }, { quoted: 'line one # not a comment\n\n  indented\n---\n' }],
        [{ plain: 'b' }, { quoted: 'x y\nz' }],
        [
          { plain: 'c' },
          {
            sequence: [{ quoted: 'item' }, { mapping: [[{ plain: 'k' }, { quoted: 'v\n' }]] }],
          },
        ],
        [{ plain: 'd' }, { plain: '1' }],
      ],
    });
    const outside = [
      'a: |+\n  kept\n\n',
      'a: |2\n   indented\n',
      'a: |\n\n  after a blank line\n',
      'a: |\n  trailing space \n',
      'a: |\n  \n  x\n',
      'a: >\n  x\n    more indented\n',
      'a: |\n  no final line break',
      'a: |\nb: 1\n',
      'a: |#c\n  x\n',
    ];
    for (const t of outside) expect(read(t)).toBeUndefined();
  });

  it('answers undefined outside the subset, and lets what a builder throws through', () => {
    for (const text of ['a: &x 1\n', 'a: |+\n  b\n', 'a: "\\ud800"\n', 'a:\n\tb: 1\n', 'x\n', '']) {
      expect(read(text)).toBeUndefined();
    }
    const failing = {
      ...SPELL,
      plain: () => {
        throw new Error('no');
      },
    };
    expect(() => readBlockSubset('a: 1\n', failing)).toThrow('no');
  });
});
