#!/usr/bin/env -S node --max-semi-space-size=16 --heap-growing-percent=30
import { fileURLToPath } from 'node:url';
import { launch } from '@qontract/core/launch';

await launch(
  fileURLToPath(new URL('../src/main.ts', import.meta.url)),
  'default',
  'qontract-shadow-compare',
);
