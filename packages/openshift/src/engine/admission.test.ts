import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../cluster/kube-client.ts';
import { admitCurrent } from './admission.ts';

const object = (name: string, annotations: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', annotations },
});
const RULE = { integration: 'openshift-saas-deploy', integrationVersion: '0.1.0' };
const mine = object('mine', { 'qontract.caller_name': 'saas-a' });
const theirs = object('theirs', { 'qontract.caller_name': 'saas-b' });
const argo = object('argo', { 'argocd.argoproj.io/tracking-id': 'x' });
const names = (rule: Parameters<typeof admitCurrent>[1]) =>
  [mine, theirs, argo].filter((o) => admitCurrent(o, rule)).map((o) => o.metadata?.name);

describe('admitCurrent: the one rule for listed and watched objects', () => {
  it('admits every object without a caller or a skip rule', () => {
    expect(names(RULE)).toEqual(['mine', 'theirs', 'argo']);
  });

  it('drops what skipCurrent drops', () => {
    const skipCurrent = (o: KubeObject) => o.metadata?.name === 'argo';
    expect(names({ ...RULE, skipCurrent })).toEqual(['mine', 'theirs']);
  });

  it("with a caller, admits only the caller's objects, unless filterCurrentByCaller is false", () => {
    expect(names({ ...RULE, caller: 'saas-a' })).toEqual(['mine']);
    expect(names({ ...RULE, caller: 'saas-a', filterCurrentByCaller: false })).toEqual([
      'mine',
      'theirs',
      'argo',
    ]);
  });

  it('reads the object as the run does: its caller from the annotation', () => {
    expect(admitCurrent(theirs, RULE)?.caller).toBe('saas-b');
  });
});
