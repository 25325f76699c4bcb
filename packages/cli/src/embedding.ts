import { registry } from './registry.ts';

/*
 * The CLI for tools that drive it in their own process (the merge-request
 * check): nothing here imports an integration before one is asked for, unlike
 * the package index, which loads them all.
 */
export { decideEarlyExitOf } from './main.ts';

/** The names of the integrations the umbrella CLI offers. */
export const integrationNames: readonly string[] = registry.map((e) => e.name);
