import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { integrations } from '@qontract/cli';
import { renderIntegrationList, replaceIntegrationList } from './readme-list.ts';

// npm run readme: rewrites the integration list in README.md from the CLI registry.
const path = resolve(import.meta.dirname, '../../../README.md');
const before = await readFile(path, 'utf8');
const after = replaceIntegrationList(before, renderIntegrationList(integrations));
if (after !== before) await writeFile(path, after);
console.log(after === before ? 'README.md is up to date' : 'README.md integration list updated');
