import { describe, expect, it } from 'vitest';
import { faultFromJson, parseFaultSpec, seededRandom } from './fault-spec.ts';

describe('fault specs of the command and the control endpoint', () => {
  it('reads key=value pairs into the library fault model', () => {
    expect(
      parseFaultSpec('cluster=k8s, verb=list,resource=secrets,namespace=ns,status=503,times=1'),
    ).toEqual({
      cluster: 'k8s',
      rule: { verb: 'list', resource: 'secrets', namespace: 'ns', status: 503, times: 1 },
    });
    expect(parseFaultSpec('status=429,retryAfter=2,errorRate=0.5')).toEqual({
      rule: { status: 429, retryAfter: 2, errorRate: 0.5 },
    });
    expect(parseFaultSpec('verb=get,drop')).toEqual({ rule: { verb: 'get', drop: true } });
    expect(parseFaultSpec('hang=true,times=2')).toEqual({ rule: { hang: true, times: 2 } });
    expect(parseFaultSpec('latencyMs=250')).toEqual({ rule: { latencyMs: 250 } });
    expect(parseFaultSpec('verb=list,continued,status=410')).toEqual({
      rule: { verb: 'list', continued: true, status: 410 },
    });
  });

  it('reads JSON', () => {
    expect(parseFaultSpec('{"cluster":"a","verb":"apply","status":409}')).toEqual({
      cluster: 'a',
      rule: { verb: 'apply', status: 409 },
    });
    expect(faultFromJson({ drop: true })).toEqual({ rule: { drop: true } });
  });

  it.each([
    ['stat=503', 'unknown field "stat"; fields are cluster, verb, resource'],
    ['verb=fetch,status=500', 'verb must be one of get, list, watch'],
    ['status=often', 'status must be an HTTP status code'],
    ['status=700', 'status must be an HTTP status code'],
    ['status=500,errorRate=2', 'errorRate must be a number from 0 to 1'],
    ['latencyMs=-5', 'latencyMs must be a non-negative integer'],
    ['drop=yes', 'drop must be true or false'],
    ['verb=list', 'it does nothing; give one of latencyMs, status, drop, hang'],
    ['drop=false', 'it does nothing'],
    ['{"status":', 'invalid JSON'],
  ])('refuses %s', (spec, message) => {
    expect(() => parseFaultSpec(spec)).toThrow(message);
  });

  it('refuses JSON of the wrong types', () => {
    expect(() => faultFromJson({ status: '503' })).toThrow('status must be an HTTP status code');
    expect(() => faultFromJson({ drop: 'true' })).toThrow('drop must be true or false');
    expect(() => faultFromJson([{ status: 500 }])).toThrow('a fault must be an object');
    expect(() => faultFromJson({ cluster: 3, status: 500 })).toThrow(
      'cluster must be a cluster name',
    );
  });

  it('has a seeded random source for reproducible error rates', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const draws = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(draws);
    for (const d of draws) expect(d >= 0 && d < 1).toBe(true);
    expect(seededRandom(8)()).not.toBe(draws[0]);
  });
});
