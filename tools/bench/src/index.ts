export { type ClusterState, clusterState, Workload } from './cluster-state.ts';
export { chooseDrift, type DriftChoice } from './drift.ts';
export { type LowerBound, type LowerBoundInput, lowerBound, PAGE_SIZE } from './lower-bound.ts';
export * from './model.ts';
export {
  DOCS_END,
  DOCS_START,
  type MachineInfo,
  markdownReport,
  type ScenarioResult,
  type SuiteReport,
  spliceResults,
} from './report.ts';
export { type RunSuiteOptions, runSuite } from './run-suite.ts';
export * from './scenarios.ts';
export { type GeneratedTree, writeAppInterfaceTree } from './tree.ts';
