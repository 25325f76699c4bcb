import { describe, expect, it } from 'vitest';
import { jsonpathFind, toJsonpathPlus } from './jsonpath.ts';

const doc = {
  namespace: [
    {
      name: 'a',
      cluster: { name: 'c1' },
      environment: { name: 'stage', labels: { type: 'stage' } },
      replicas: '3',
    },
    {
      name: 'b',
      cluster: { name: 'c2' },
      environment: { name: 'production' },
      skupperSite: { delete: true },
      replicas: 5,
    },
    {
      name: 'c',
      cluster: { name: 'c1' },
      environment: { name: 'stage' },
      skupperSite: {},
      flag: false,
    },
  ],
};
const names = (expr: string) => jsonpathFind(expr, doc).map((n) => (n as { name: string }).name);

describe('jsonpathFind (jsonpath-ng extended filter semantics)', () => {
  it.each([
    ['namespace[*]', ['a', 'b', 'c']],
    ['$.namespace[*]', ['a', 'b', 'c']],
    ['namespace[0]', ['a']],
    ['namespace[?@.name="a"]', ['a']],
    ['namespace[?(@.name=="b")]', ['b']],
    ["namespace[?@.cluster.name='c1']", ['a', 'c']],
    ['namespace[?@.name!="a"]', ['b', 'c']],
    ['namespace[?@.environment.labels.type="stage"]', ['a']],
    ['namespace[?@.environment.name="stage" & @.cluster.name="c1"]', ['a', 'c']],
    ['namespace[?(@.cluster.name=~"^c" & @.name=="c")]', ['c']],
    ['namespace[?@.cluster.name=~"2$"]', ['b']],
    // a path without an operator tests existence, even of an empty map or false
    ['namespace[?@.skupperSite]', ['b', 'c']],
    ['namespace[?@.flag]', ['c']],
    // `true` compares as Python's int(value) == 1
    ['namespace[?@.skupperSite.delete=true]', ['b']],
    // integer literals convert the value with int(): "3" == 3
    ['namespace[?@.replicas=3]', ['a']],
    ['namespace[?@.replicas>4]', ['b']],
    // a bare name is relative to the element
    ['namespace[?name="c"]', ['c']],
    ['namespace[?@.missing="x"]', []],
  ])('%s', (expr, expected) => {
    expect(names(expr)).toEqual(expected);
  });

  it('rejects malformed expressions with a clear error', () => {
    expect(() => jsonpathFind('namespace[?()GARBAGE]', doc)).toThrow(
      /invalid JSONPath expression 'namespace\[\?\(\)GARBAGE\]'/,
    );
    expect(() => jsonpathFind('namespace[?@.a="x" && @.b="y"]', doc)).toThrow(/invalid JSONPath/);
    expect(() => jsonpathFind('namespace[?@.a="x"', doc)).toThrow(/unterminated filter/);
  });

  it('adds the parentheses jsonpath-plus needs', () => {
    expect(toJsonpathPlus('namespace[?@.a="]"]')).toBe('namespace[?(@.a="]")]');
    expect(toJsonpathPlus('namespace[?(@.a=1)]')).toBe('namespace[?((@.a=1))]');
  });
});
