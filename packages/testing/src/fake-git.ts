import { createHash } from 'node:crypto';
import { crc32, createGzip, deflateRawSync } from 'node:zlib';
import { pack } from 'tar-stream';

/**
 * The files a test pushes: path → content; `null` deletes the path.
 *
 * @public the argument of the fakes' `pushCommit`
 */
export type FakeGitFiles = Readonly<Record<string, string | Uint8Array | null>>;

/** One commit of a fake repository: a full snapshot of its files. */
export interface FakeGitCommit {
  readonly sha: string;
  readonly parents: readonly string[];
  readonly message: string;
  /** ISO timestamp, seconds precision (`2020-01-01T00:00:00Z`). */
  readonly date: string;
  readonly treeSha: string;
  /** path (no leading `/`) → content */
  readonly tree: ReadonlyMap<string, Buffer>;
}

/** What a directory holds, as the hosting APIs list it (git's tree order). */
export interface FakeGitEntry {
  readonly name: string;
  /** Full path from the repository root. */
  readonly path: string;
  readonly type: 'file' | 'dir';
  /** The blob id of a file, the tree id of a directory. */
  readonly sha: string;
  /** Bytes of a file; 0 for a directory. */
  readonly size: number;
}

const AUTHOR = 'Fake Git <fake@example.com>';

/**
 * A git repository as the fake GitHub and GitLab serve it: branches and
 * tags pointing at commits, each commit a full snapshot of the files.
 * Blob, tree and commit ids are git's own (sha1 of the object), so a blob
 * sha is what `git hash-object` prints for the same content.
 */
export class FakeGitRepository {
  readonly branches = new Map<string, string>();
  readonly tags = new Map<string, string>();
  readonly commits = new Map<string, FakeGitCommit>();
  /** Every blob ever pushed, by id (git keeps them reachable by id). */
  readonly blobs = new Map<string, Buffer>();
  defaultBranch: string | undefined;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * A new commit on `branch` (created when missing, from nothing) whose tree
   * is the branch's tree with `files` applied. With `sha`, that id is used
   * instead of git's (tests that need a well-known sha).
   */
  push(
    branch: string,
    files: FakeGitFiles,
    options: { message?: string; sha?: string } = {},
  ): FakeGitCommit {
    const parentSha = this.branches.get(branch);
    const parent = parentSha === undefined ? undefined : this.commits.get(parentSha);
    const tree = new Map(parent?.tree);
    for (const [raw, content] of Object.entries(files)) {
      const path = normalizePath(raw);
      if (content === null) {
        tree.delete(path);
        continue;
      }
      const bytes = Buffer.from(content);
      tree.set(path, bytes);
      this.blobs.set(gitBlobSha(bytes), bytes);
    }
    const sorted = new Map([...tree].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const treeSha = hashTree(sorted, '');
    const message = options.message ?? `Update ${Object.keys(files).join(', ') || 'nothing'}`;
    const seconds = Math.floor(this.#now() / 1000);
    const parents = parentSha === undefined ? [] : [parentSha];
    const body = [
      `tree ${treeSha}`,
      ...parents.map((p) => `parent ${p}`),
      `author ${AUTHOR} ${seconds} +0000`,
      `committer ${AUTHOR} ${seconds} +0000`,
      '',
      `${message}\n`,
    ].join('\n');
    const commit: FakeGitCommit = {
      sha: options.sha ?? gitObjectSha('commit', Buffer.from(body)),
      parents,
      message,
      date: `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`,
      treeSha,
      tree: sorted,
    };
    this.commits.set(commit.sha, commit);
    this.branches.set(branch, commit.sha);
    this.defaultBranch ??= branch;
    return commit;
  }

  /** Points tag `name` at what `ref` names; returns the commit sha. */
  tag(name: string, ref: string): string {
    const commit = this.resolve(ref);
    if (!commit) throw new Error(`fake git: no commit for ${ref}`);
    this.tags.set(name, commit.sha);
    return commit.sha;
  }

  /**
   * The commit a ref names, as git resolves it: a full sha, a branch, a tag,
   * or an unambiguous abbreviated sha of at least 7 hex digits.
   */
  resolve(ref: string): FakeGitCommit | undefined {
    const direct = this.commits.get(ref);
    if (direct) return direct;
    const named = this.branches.get(ref) ?? this.tags.get(ref);
    if (named !== undefined) return this.commits.get(named);
    if (!/^[0-9a-f]{7,39}$/i.test(ref)) return undefined;
    const prefix = ref.toLowerCase();
    const matches = [...this.commits.keys()].filter((sha) => sha.startsWith(prefix));
    return matches.length === 1 ? this.commits.get(matches[0]!) : undefined;
  }

  /** The history from `ref` along first parents, newest first. */
  log(ref: string): FakeGitCommit[] {
    const out: FakeGitCommit[] = [];
    let commit = this.resolve(ref);
    while (commit) {
      out.push(commit);
      const parent = commit.parents[0];
      commit = parent === undefined ? undefined : this.commits.get(parent);
    }
    return out;
  }

  /** `file` when `path` is a file of the commit, `dir` when a directory (`''` is the root), else undefined. */
  kind(commit: FakeGitCommit, path: string): 'file' | 'dir' | undefined {
    const p = normalizePath(path);
    if (p === '') return 'dir';
    if (commit.tree.has(p)) return 'file';
    for (const file of commit.tree.keys()) if (file.startsWith(`${p}/`)) return 'dir';
    return undefined;
  }

  /** The entries directly in directory `dir` of the commit. */
  entries(commit: FakeGitCommit, dir: string): FakeGitEntry[] {
    const base = normalizePath(dir);
    const prefix = base === '' ? '' : `${base}/`;
    const out = new Map<string, FakeGitEntry>();
    for (const [file, content] of commit.tree) {
      if (!file.startsWith(prefix)) continue;
      const rest = file.slice(prefix.length);
      const slash = rest.indexOf('/');
      const name = slash === -1 ? rest : rest.slice(0, slash);
      if (out.has(name)) continue;
      const path = `${prefix}${name}`;
      out.set(
        name,
        slash === -1
          ? { name, path, type: 'file', sha: gitBlobSha(content), size: content.length }
          : { name, path, type: 'dir', sha: hashTree(commit.tree, `${path}/`), size: 0 },
      );
    }
    return [...out.values()].sort(byGitOrder);
  }

  /** The snapshot and directory (`''`: the root) whose git tree id is `sha`, or undefined. */
  findTree(sha: string): { commit: FakeGitCommit; dir: string } | undefined {
    for (const commit of this.commits.values()) {
      if (commit.treeSha === sha) return { commit, dir: '' };
      const dirs = new Set<string>();
      for (const path of commit.tree.keys()) {
        for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) {
          dirs.add(path.slice(0, i));
        }
      }
      for (const dir of dirs) if (hashTree(commit.tree, `${dir}/`) === sha) return { commit, dir };
    }
    return undefined;
  }

  /** Every file at or below `dir` (recursive), in git's tree order (byte order of full paths). */
  filesUnder(commit: FakeGitCommit, dir: string): Array<{ path: string; content: Buffer }> {
    const base = normalizePath(dir);
    const prefix = base === '' ? '' : `${base}/`;
    const out: Array<{ path: string; content: Buffer }> = [];
    for (const [path, content] of commit.tree) {
      if (path.startsWith(prefix)) out.push({ path, content });
    }
    return out;
  }
}

/** Paths are kept without leading or trailing `/`, as git stores them. */
export function normalizePath(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}

/** Git's object id: sha1 of `<type> <size>\0<content>`. */
function gitObjectSha(type: string, content: Buffer): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

/** Git's blob id, what `git hash-object` prints. */
export function gitBlobSha(content: Uint8Array | string): string {
  return gitObjectSha('blob', Buffer.from(content));
}

/** Git orders tree entries by name, a directory compared as if its name ended in `/`. */
function byGitOrder(a: FakeGitEntry, b: FakeGitEntry): number {
  const ka = a.type === 'dir' ? `${a.name}/` : a.name;
  const kb = b.type === 'dir' ? `${b.name}/` : b.name;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** The git tree id of the directory `prefix` (`''`: the root) of a snapshot. */
function hashTree(tree: ReadonlyMap<string, Buffer>, prefix: string): string {
  const files = new Map<string, Buffer>();
  const dirs = new Set<string>();
  for (const [path, content] of tree) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash === -1) files.set(rest, content);
    else dirs.add(rest.slice(0, slash));
  }
  const entries = [
    ...[...files].map(([name, content]) => ({
      key: name,
      mode: '100644',
      name,
      sha: gitBlobSha(content),
    })),
    ...[...dirs].map((name) => ({
      key: `${name}/`,
      mode: '40000',
      name,
      sha: hashTree(tree, `${prefix}${name}/`),
    })),
  ].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const body = Buffer.concat(
    entries.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.sha, 'hex')]),
  );
  return gitObjectSha('tree', body);
}

/** A file of an archive: path below the archive's top folder, content. */
interface ArchiveFile {
  readonly path: string;
  readonly content: Buffer;
}

/**
 * The entries of an archive of `files` under folder `top`, in `git archive`'s
 * order: each folder (name ending in `/`, no content) before the first file in it.
 */
function archiveEntries(
  top: string,
  files: readonly ArchiveFile[],
): Array<{ name: string; content: Buffer | undefined }> {
  const out: Array<{ name: string; content: Buffer | undefined }> = [];
  const seen = new Set<string>();
  const folder = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    out.push({ name: `${name}/`, content: undefined });
  };
  folder(top);
  for (const file of files) {
    const parts = file.path.split('/');
    for (let i = 1; i < parts.length; i++) folder(`${top}/${parts.slice(0, i).join('/')}`);
    out.push({ name: `${top}/${file.path}`, content: file.content });
  }
  return out;
}

/**
 * A gzip-compressed tar of `files` under folder `top`, as `git archive`
 * writes it (what GitLab's repository archive and GitHub's tarball serve).
 */
export async function tarGz(
  top: string,
  files: readonly ArchiveFile[],
  mtimeSeconds: number,
): Promise<Buffer> {
  const tar = pack();
  const mtime = new Date(mtimeSeconds * 1000);
  for (const { name, content } of archiveEntries(top, files)) {
    if (content === undefined) tar.entry({ name, type: 'directory', mode: 0o775, mtime });
    else tar.entry({ name, mode: 0o664, mtime }, content);
  }
  tar.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of tar.pipe(createGzip())) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A zip of `files` under folder `top` (deflated files, folders included), as
 * `git archive --format=zip` writes it (GitHub's zipball). Node has no zip
 * writer and the format is small: local headers, a central directory, its end.
 */
export function zipArchive(
  top: string,
  files: readonly ArchiveFile[],
  mtimeSeconds: number,
): Buffer {
  const d = new Date(mtimeSeconds * 1000);
  const time = (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | (d.getUTCSeconds() >> 1);
  const date = ((d.getUTCFullYear() - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate();
  const entries = archiveEntries(top, files);
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const content = entry.content ?? Buffer.alloc(0);
    const folder = entry.content === undefined;
    const data = folder ? content : deflateRawSync(content);
    // The fields both headers share: version needed, flags, method, time, date, crc,
    // sizes, name and extra field lengths.
    const common = Buffer.alloc(26);
    common.writeUInt16LE(20, 0);
    common.writeUInt16LE(folder ? 0 : 8, 4);
    common.writeUInt16LE(time, 6);
    common.writeUInt16LE(date, 8);
    common.writeUInt32LE(crc32(content), 10);
    common.writeUInt32LE(data.length, 14);
    common.writeUInt32LE(content.length, 18);
    common.writeUInt16LE(name.length, 22);
    const local = Buffer.concat([u32(0x04034b50), common, name, data]);
    // Comment length, disk, internal attributes (all 0), external attributes, local header offset.
    const tail = Buffer.alloc(14);
    tail.writeUInt32LE(folder ? 0x10 : 0, 6);
    tail.writeUInt32LE(offset, 10);
    centrals.push(Buffer.concat([u32(0x02014b50), u16(20), common, tail, name]));
    locals.push(local);
    offset += local.length;
  }
  const central = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(central.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, central, end]);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}
