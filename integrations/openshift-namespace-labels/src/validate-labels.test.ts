import { describe, expect, it } from 'vitest';
import {
  LABEL_MAX_KEY_NAME_LENGTH,
  LABEL_MAX_KEY_PREFIX_LENGTH,
  LABEL_MAX_VALUE_LENGTH,
  validateLabels,
} from './validate-labels.ts';

// The original's validate_labels test vectors, by number of messages expected.
describe('validateLabels', () => {
  const long = (n: number) => 'a'.repeat(n);
  it.each([
    {
      name: 'valid labels',
      labels: { 'my.company.com/key-name': 'value', team: 'app-sre' },
      count: 0,
    },
    { name: 'an empty value', labels: { key: '' }, count: 0 },
    { name: 'a value at the limit', labels: { key: long(LABEL_MAX_VALUE_LENGTH) }, count: 0 },
    { name: 'a value too long', labels: { key: long(LABEL_MAX_VALUE_LENGTH + 1) }, count: 1 },
    {
      name: 'a key name at the limit',
      labels: { [long(LABEL_MAX_KEY_NAME_LENGTH)]: 'v' },
      count: 0,
    },
    {
      name: 'a key name too long',
      labels: { [long(LABEL_MAX_KEY_NAME_LENGTH + 1)]: 'v' },
      count: 1,
    },
    {
      name: 'a prefix at the limit',
      labels: { [`${long(LABEL_MAX_KEY_PREFIX_LENGTH)}/key`]: 'v' },
      count: 0,
    },
    {
      name: 'a prefix too long',
      labels: { [`${long(LABEL_MAX_KEY_PREFIX_LENGTH + 1)}/key`]: 'v' },
      count: 1,
    },
    { name: 'an invalid value', labels: { 'my.company.com/key-name': 'b@d' }, count: 1 },
    { name: 'an invalid key name', labels: { 'my.company.com/key@name': 'value' }, count: 1 },
    { name: 'an invalid prefix', labels: { 'my@company.com/key-name': 'value' }, count: 1 },
    { name: 'the kubernetes.io prefix', labels: { 'kubernetes.io/key-name': 'value' }, count: 1 },
    { name: 'the k8s.io prefix', labels: { 'k8s.io/key-name': 'value' }, count: 1 },
    { name: 'three slashes', labels: { 'a/b/c/d': 'v' }, count: 1 },
    { name: 'a value that is not a string', labels: { replicas: 3 }, count: 1 },
  ])('$name: $count message(s)', ({ labels, count }) => {
    expect(validateLabels(labels)).toHaveLength(count);
  });

  it('reports every violation of several labels (upstream test_many_wrong: 10)', () => {
    const longstr = long(LABEL_MAX_KEY_PREFIX_LENGTH + 1);
    const value = `b@d-${longstr}`;
    const errors = validateLabels({
      [`b@d.${longstr}.com/b@d-${longstr}`]: value,
      'kubernetes.io/b@d': value,
    });
    expect(errors).toHaveLength(10);
    expect(errors).toContain('Label key prefix is reserved: kubernetes.io');
  });

  it('names the offending part in each message', () => {
    expect(validateLabels({ 'example.com/key': 'b@d' })).toEqual([
      "Label value is invalid, it needs to match '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$': b@d",
    ]);
  });
});
