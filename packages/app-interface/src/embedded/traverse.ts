import type { Bundle } from './types.ts';

export function computeResourceBackrefs(_bundle: Bundle): void {}
