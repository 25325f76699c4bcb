import { globSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/** The files `tsc -p tsconfig.build.json` compiles: `src/**` less the build's `exclude`. */
function builtFiles(): string[] {
  const { exclude } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as {
    exclude: string[];
  };
  return globSync('src/**/*.ts', { cwd: ROOT, exclude });
}

/** The packages a file imports (static, `import type`, re-exports and dynamic imports). */
function importedPackages(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/(?:\bfrom|\bimport\()\s*['"]([^'"./][^'"]*)['"]/g)].map(([, spec]) => {
    const parts = spec!.split('/');
    return (spec!.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
  });
}

describe("the CLI's build", () => {
  // The e2e helpers and the reliability suite drive the fakes (fake API server, fake Vault,
  // S3, GitHub, GitLab): they are test infrastructure beside the product, not part of it.
  it('compiles no file that imports a devDependency (the fakes, test tools)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    const dev = new Set(Object.keys(pkg.devDependencies));
    const files = builtFiles();
    expect(files).toContain('src/main.ts');
    const offending = files.flatMap((f) =>
      importedPackages(f)
        .filter((p) => dev.has(p))
        .map((p) => `${f} imports ${p}`),
    );
    expect(offending).toEqual([]);
  });
});
