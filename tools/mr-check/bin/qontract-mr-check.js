#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { launch } from '@qontract/core/launch';

await launch(
  fileURLToPath(new URL('../src/main.ts', import.meta.url)),
  'default',
  'qontract-mr-check',
);
