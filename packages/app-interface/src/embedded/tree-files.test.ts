import { mkdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTree, writeTree } from './test-support/tree.ts';
import { type DirectoryFiles, LOCAL_FILES, readDirectoriesInWorker } from './tree-files.ts';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map(removeTree));
});

/** Each file's key with its text, or the message reading it threw. */
function contents(dir: DirectoryFiles): [string, string][] {
  return dir.files.map(([, key], i) => {
    try {
      return [key, dir.read(i).toString()];
    } catch (e) {
      return [key, `error: ${(e as Error).message}`];
    }
  });
}

describe('readDirectoriesInWorker', () => {
  it('gives the files, keys and bytes (or read errors) that reading on this thread gives', async () => {
    const root = await writeTree({
      'a/x.yml': 'x: 1\n',
      'a/sub/y.json': '{"y": 2}',
      'a/.hidden.yml': 'h: 1\n',
      'a/empty.txt': '',
      'b/z.txt': 'caf\u00e9\n',
    });
    roots.push(root);
    await symlink(join(root, 'b'), join(root, 'a/link.yml'));
    await mkdir(join(root, 'a/emptydir'));
    const dirs = [join(root, 'a'), join(root, 'b'), join(root, 'missing')];
    const worker = readDirectoriesInWorker(dirs);
    try {
      for (const dir of dirs.slice(0, 2)) {
        expect(contents(await worker.directory(dir))).toEqual(
          contents(await LOCAL_FILES.directory(dir)),
        );
      }
      const a = contents(await worker.directory(dirs[0]!));
      expect(a.map(([key]) => key).sort()).toEqual([
        '/empty.txt',
        '/link.yml',
        '/sub/y.json',
        '/x.yml',
      ]);
      expect(Object.fromEntries(a)['/link.yml']).toMatch(/^error: EISDIR/);
      // the bytes were read by the worker, before the file went away
      const b = await worker.directory(dirs[1]!);
      await rm(join(root, 'b/z.txt'));
      expect(contents(b)).toEqual([['/z.txt', 'caf\u00e9\n']]);
      // a directory the worker cannot list is listed here, failing as it does here
      await expect(worker.directory(dirs[2]!)).rejects.toThrow(/ENOENT/);
    } finally {
      worker.close();
    }
  });

  it('lists and reads on this thread what it was not asked for, or after it was closed', async () => {
    const root = await writeTree({ 'a/x.yml': 'x: 1\n' });
    roots.push(root);
    const worker = readDirectoriesInWorker([]);
    worker.close();
    expect(contents(await worker.directory(join(root, 'a')))).toEqual([['/x.yml', 'x: 1\n']]);
  });
});
