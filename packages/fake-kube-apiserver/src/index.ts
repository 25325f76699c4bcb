export { seededRandom } from './fault-spec.ts';
export type { FaultRule } from './faults.ts';
export { type InFlightCounts, InFlightGauge } from './in-flight.ts';
export {
  type FakeKubeApiServer,
  startFakeKubeApiServer,
} from './server.ts';
export { servingCertificate } from './tls.ts';
