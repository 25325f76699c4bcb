/**
 * "What if" patches: the fixes this benchmark proposes for other packages,
 * applied at run time inside a measured child only, so that their effect on
 * a whole run is measured before anybody changes the code. Nothing here is
 * product code; each patch names the change it stands for.
 */
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './tree.ts';

export async function applyWhatIfPatches(): Promise<string[]> {
  const applied: string[] = [];
  // Patches reach into other packages' internals: when those moved on, the patch is skipped, not fatal.
  if (await cheaperYamlScanner()) applied.push('yaml-scanner');
  return applied;
}

/**
 * Stands for two changes in packages/openshift/src/resource/yaml/scanner.ts:
 * `stalePossibleSimpleKeys` iterates the Map instead of copying it into an
 * array on every token (and returns at once when it is empty), and
 * `prefix` builds its string without `slice().join()`.
 */
async function cheaperYamlScanner(): Promise<boolean> {
  const url = pathToFileURL(`${REPO_ROOT}/packages/openshift/src/resource/yaml/scanner.ts`);
  let Scanner: { prototype: object } | undefined;
  try {
    ({ Scanner } = (await import(url.href)) as { Scanner?: { prototype: object } });
  } catch {
    return false;
  }
  if (!Scanner) return false;
  interface SimpleKey {
    line: number;
    index: number;
    required: boolean;
  }
  interface ScannerInternals {
    chars: string[];
    pointer: number;
    line: number;
    possibleSimpleKeys: Map<number, SimpleKey>;
    error(context: string, problem: string): Error;
    stalePossibleSimpleKeys(): void;
    prefix(length?: number): string;
  }
  const proto = Scanner.prototype as ScannerInternals;
  if (typeof proto.stalePossibleSimpleKeys !== 'function' || typeof proto.prefix !== 'function')
    return false;
  proto.stalePossibleSimpleKeys = function (this: ScannerInternals) {
    if (this.possibleSimpleKeys.size === 0) return;
    for (const [level, key] of this.possibleSimpleKeys) {
      if (key.line !== this.line || this.pointer - key.index > 1024) {
        if (key.required)
          throw this.error('while scanning a simple key', "could not find expected ':'");
        this.possibleSimpleKeys.delete(level);
      }
    }
  };
  proto.prefix = function (this: ScannerInternals, length = 1) {
    if (length === 1) return this.chars[this.pointer] ?? '';
    let out = '';
    const end = Math.min(this.chars.length, this.pointer + length);
    for (let i = this.pointer; i < end; i++) out += this.chars[i];
    return out;
  };
  return true;
}
