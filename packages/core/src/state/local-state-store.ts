import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { JsonStateStore, type StoredObject } from './json-state-store.ts';
import { StateInaccessibleError } from './types.ts';

/** Metadata lives beside the tree, so listing `state/` never sees it. */
const METADATA_DIR = '.metadata';

/**
 * State in a local directory, for the embedded default: the same JSON text
 * as on S3, in files `<dir>/state/<integration>/<key>`.
 */
export class LocalDirStateStore extends JsonStateStore {
  readonly directory: string;

  private constructor(integration: string, directory: string) {
    super(integration);
    this.directory = directory;
  }

  /** Opens (and creates when missing) the state directory. */
  static async open(options: {
    integration: string;
    directory: string;
  }): Promise<LocalDirStateStore> {
    try {
      await mkdir(options.directory, { recursive: true });
      if (!(await stat(options.directory)).isDirectory()) throw new Error('not a directory');
    } catch (e) {
      throw new StateInaccessibleError(
        `state directory ${options.directory} is not usable: ${errorCode(e)}`,
      );
    }
    return new LocalDirStateStore(options.integration, options.directory);
  }

  protected async readObject(objectKey: string): Promise<StoredObject | undefined> {
    const file = this.#file(objectKey);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw this.#inaccessible('reading', file, e);
    }
    return { text, metadata: await this.#readMetadata(objectKey) };
  }

  protected async writeObject(objectKey: string, object: StoredObject): Promise<void> {
    const file = this.#file(objectKey);
    try {
      await writeAtomically(file, object.text);
      await writeAtomically(this.#metadataFile(objectKey), JSON.stringify(object.metadata));
    } catch (e) {
      throw this.#inaccessible('writing', file, e);
    }
  }

  protected async deleteObject(objectKey: string): Promise<void> {
    const file = this.#file(objectKey);
    try {
      await rm(file, { force: true });
      await rm(this.#metadataFile(objectKey), { force: true });
    } catch (e) {
      throw this.#inaccessible('deleting', file, e);
    }
  }

  protected async listObjectKeys(prefix: string): Promise<string[]> {
    // Walk from the deepest directory the prefix names, then filter like S3 does.
    const slash = prefix.lastIndexOf('/');
    const base = slash < 0 ? '' : prefix.slice(0, slash);
    const root = join(this.directory, ...base.split('/').filter(Boolean));
    let entries: string[];
    try {
      entries = await readdir(root, { recursive: true });
    } catch (e) {
      if (isMissing(e)) return [];
      throw this.#inaccessible('listing', root, e);
    }
    const keys: string[] = [];
    for (const entry of entries) {
      const full = join(root, entry);
      const info = await stat(full).catch(() => undefined);
      if (!info?.isFile() || entry.includes('.qr-tmp-')) continue;
      const key = relative(this.directory, full).split(sep).join('/');
      if (key.startsWith(prefix)) keys.push(key);
    }
    return keys.sort();
  }

  protected async headObject(
    objectKey: string,
  ): Promise<{ exists: boolean; metadata: Record<string, string> }> {
    const file = this.#file(objectKey);
    try {
      const info = await stat(file);
      if (!info.isFile()) return { exists: false, metadata: {} };
    } catch (e) {
      if (isMissing(e)) return { exists: false, metadata: {} };
      throw this.#inaccessible('reading', file, e);
    }
    return { exists: true, metadata: await this.#readMetadata(objectKey) };
  }

  async #readMetadata(objectKey: string): Promise<Record<string, string>> {
    try {
      return JSON.parse(await readFile(this.#metadataFile(objectKey), 'utf8')) as Record<
        string,
        string
      >;
    } catch {
      return {};
    }
  }

  #file(objectKey: string): string {
    const parts = objectKey.split('/');
    // A key is a path inside the store; `..` or empty segments would escape or alias it.
    if (parts.some((p) => p === '' || p === '.' || p === '..')) {
      throw new StateInaccessibleError(`invalid state key '${objectKey}' for a local directory`);
    }
    return join(this.directory, ...parts);
  }

  #metadataFile(objectKey: string): string {
    return `${join(this.directory, METADATA_DIR, ...objectKey.split('/'))}.json`;
  }

  #inaccessible(what: string, file: string, e: unknown): StateInaccessibleError {
    return new StateInaccessibleError(`${what} ${file} failed: ${errorCode(e)}`, { cause: e });
  }
}

async function writeAtomically(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.qr-tmp-${randomBytes(6).toString('hex')}`;
  await writeFile(temp, text, 'utf8');
  await rename(temp, file);
}

function isMissing(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function errorCode(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  return code ?? (e instanceof Error ? e.message : String(e));
}
