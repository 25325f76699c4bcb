import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The committed fixture tree used by most engine tests. */
export const BASIC_FIXTURE = fileURLToPath(new URL('../test-fixtures/basic', import.meta.url));

/** Writes `files` (relative path → content) under a fresh temp directory. */
export async function writeTree(files: Record<string, string | Uint8Array>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'qontract-embedded-'));
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, content);
  }
  return root;
}

export async function removeTree(root: string): Promise<void> {
  await rm(root, { recursive: true, force: true });
}

/** A small schema.yml: one datafile type with a searchable name and a crossref list. */
export const SMALL_SCHEMA_YML = `
confs:
- name: Query
  fields:
  - { name: things_v1, type: Thing_v1, isList: true, datafileSchema: /thing-1.yml }
- name: Thing_v1
  datafile: /thing-1.yml
  fields:
  - { name: path, type: string, isRequired: true }
  - { name: name, type: string, isRequired: true, isSearchable: true, isUnique: true }
  - { name: other, type: Thing_v1 }
  - { name: doc, type: string, isResource: true }
`;
