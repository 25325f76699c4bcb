import type { AnyIntegration } from '@qontract/core';
import { loadIntegrations } from './registry.ts';

/**
 * Every integration's definition, all imported: for tools that need them all
 * (README list, MR checks). The CLI itself loads only the one that runs.
 */
export const integrations: readonly AnyIntegration[] = await loadIntegrations();
