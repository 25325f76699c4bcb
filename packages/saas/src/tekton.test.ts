import { describe, expect, it } from 'vitest';
import {
  BadDurationError,
  dhmsToSeconds,
  secondsToHms,
  TektonNameTooLongError,
  tektonNamespaceObjectName,
  tektonPipelineName,
  tektonSaasFileTaskName,
} from './tekton.ts';

describe('Tekton object names (openshift-tekton-resources and the triggers)', () => {
  it('prefixes every object with o-', () => {
    expect(tektonNamespaceObjectName('push-gateway-openshift-saas-deploy-task-status-metric')).toBe(
      'o-push-gateway-openshift-saas-deploy-task-status-metric',
    );
    expect(tektonSaasFileTaskName('openshift-saas-deploy', 'saas-example-app')).toBe(
      'o-openshift-saas-deploy-saas-example-app',
    );
    expect(tektonPipelineName('saas-deploy', 'saas-example-app')).toBe(
      'o-saas-deploy-saas-example-app',
    );
  });

  it('allows 63 characters for tasks and 56 for pipelines', () => {
    const task = 'x'.repeat(63 - 'o-t-'.length);
    expect(tektonSaasFileTaskName('t', task)).toHaveLength(63);
    expect(() => tektonSaasFileTaskName('t', `${task}x`)).toThrow(TektonNameTooLongError);
    const pipeline = 'y'.repeat(56 - 'o-p-'.length);
    expect(tektonPipelineName('p', pipeline)).toHaveLength(56);
    expect(() => tektonPipelineName('p', `${pipeline}y`)).toThrow(
      `Pipeline name o-p-${pipeline}y is longer than 56 characters`,
    );
    expect(() => tektonNamespaceObjectName('z'.repeat(62))).toThrow('longer than 63 characters');
  });
});

describe('durations as the original parses them', () => {
  it.each([
    ['1h', 3600],
    ['1d1h1m2s', 90062],
    ['90m', 5400],
    ['2h30m', 9000],
    ['10s', 10],
  ])('%s is %i seconds', (text, seconds) => {
    expect(dhmsToSeconds(text)).toBe(seconds);
  });

  it.each(['h', '1', '1h2', '1x', '1hh', ''])('refuses %j', (text) => {
    expect(() => dhmsToSeconds(text)).toThrow(BadDurationError);
  });

  it('prints seconds back as h/m/s', () => {
    expect(secondsToHms(5)).toBe('5s');
    expect(secondsToHms(62)).toBe('1m2s');
    expect(secondsToHms(3600)).toBe('1h0m0s');
    expect(secondsToHms(90062)).toBe('25h1m2s');
  });
});
