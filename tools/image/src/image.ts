import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { arch, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository's root: the build context of the Containerfile. */
const ROOT = resolve(import.meta.dirname, '../../..');

/** The image the checks build and run (a local name: it is never pushed). */
export const TEST_IMAGE = 'localhost/qontract-reconcile-ts:test-image';

/**
 * npm for the base's build stage (the Containerfile runs `npm ci` and `npm pack`):
 * Node's release tarballs bundle one, the npm registry's `node-linux-*` packages
 * do not. Pinned so that every machine makes the same base.
 */
const NPM_VERSION = '11.19.1';
const DEBIAN_SUITE = 'bookworm';
const DEBIAN_MIRROR = process.env.DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';

/** A command's failure: the command line and the end of what it printed, no stack of ours. */
class CommandError extends Error {}

/** Runs `command` (no shell) and returns its stdout; throws a CommandError naming it. */
export async function sh(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  return new Promise((done, fail) => {
    execFile(
      command,
      args,
      { maxBuffer: 64 * 1024 * 1024, ...options },
      (error, stdout, stderr) => {
        if (!error) return done(stdout);
        const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
        const tail = `${stdout}${stderr}`.trim().split('\n').slice(-20).join('\n');
        fail(
          new CommandError(
            missing
              ? `${command} not found: apt-get install buildah podman runc debootstrap (see tools/image/README.md)`
              : `${command} ${args.join(' ')} failed (${error.code ?? error.signal}):\n${tail}`,
          ),
        );
      },
    );
  });
}

/** The Node version the workspace runs (the lockfile's `node` package), which the base gets. */
async function workspaceNodeVersion(): Promise<string> {
  const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  const version = lock.packages['node_modules/node']?.version;
  if (!version) throw new Error('package-lock.json has no node_modules/node entry');
  return version;
}

/** The name of the base for this workspace's Node: one base per Node and npm version. */
export async function baseImageName(): Promise<string> {
  return `localhost/qontract-reconcile-base:${DEBIAN_SUITE}-node${await workspaceNodeVersion()}-npm${NPM_VERSION}`;
}

const imageExists = async (name: string) =>
  sh('podman', ['image', 'exists', name]).then(
    () => true,
    (e: unknown) => {
      // `image exists` answers with exit code 1; anything else (no podman) is an error.
      if (e instanceof CommandError && e.message.includes('failed (1)')) return false;
      throw e;
    },
  );

/**
 * The base both stages of the Containerfile use here (in place of UBI's
 * nodejs-24 images, which are out of reach): a minimal Debian made by
 * debootstrap with ca-certificates and tini, plus Node from the npm registry
 * (the `node-linux-<arch>` package the workspace's `node` devDependency
 * installs) and npm. Made once and kept in the local image store; false when
 * it was already there.
 */
export async function ensureBaseImage(name: string): Promise<boolean> {
  if (await imageExists(name)) return false;
  const work = await mkdtemp(join(tmpdir(), 'qr-image-base-'));
  try {
    const rootfs = join(work, 'rootfs');
    await sh('debootstrap', [
      '--variant=minbase',
      '--include=ca-certificates,tini',
      DEBIAN_SUITE,
      rootfs,
      DEBIAN_MIRROR,
    ]);
    // What a container never needs: package lists and downloads, docs, manuals, translations.
    const unneeded = [
      'var/cache/apt',
      'var/lib/apt/lists',
      'usr/share/doc',
      'usr/share/man',
      'usr/share/locale',
    ];
    for (const dir of unneeded) {
      await rm(join(rootfs, dir), { recursive: true, force: true });
      await mkdir(join(rootfs, dir));
    }
    const node = `node-linux-${arch()}@${await workspaceNodeVersion()}`;
    const packs = join(work, 'packs');
    await mkdir(packs);
    const packed = JSON.parse(
      await sh('npm', ['pack', '--json', '--pack-destination', packs, node, `npm@${NPM_VERSION}`]),
    ) as { filename: string }[];
    const [nodeTgz, npmTgz] = packed.map((p) => join(packs, p.filename));
    // Laid out as Node's release tarballs are: bin/node, lib/node_modules/npm, bin/npm.
    await sh('tar', [
      '-xzf',
      nodeTgz!,
      '-C',
      join(rootfs, 'usr/local'),
      '--strip-components=1',
      'package/bin/node',
    ]);
    const npmDir = join(rootfs, 'usr/local/lib/node_modules/npm');
    await mkdir(npmDir, { recursive: true });
    await sh('tar', ['-xzf', npmTgz!, '-C', npmDir, '--strip-components=1']);
    await sh('ln', [
      '-s',
      '../lib/node_modules/npm/bin/npm-cli.js',
      join(rootfs, 'usr/local/bin/npm'),
    ]);
    await sh('ln', [
      '-s',
      '../lib/node_modules/npm/bin/npx-cli.js',
      join(rootfs, 'usr/local/bin/npx'),
    ]);
    const tar = join(work, 'rootfs.tar');
    await sh('tar', ['-C', rootfs, '-cf', tar, '.']);
    const container = (await sh('buildah', ['from', 'scratch'])).trim();
    try {
      await sh('buildah', ['add', '--quiet', container, tar, '/']);
      await sh('buildah', [
        'config',
        '--env',
        'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--cmd',
        '/bin/sh',
        container,
      ]);
      await sh('buildah', ['commit', '--quiet', container, name]);
    } finally {
      await sh('buildah', ['rm', container]).catch(() => undefined);
    }
    return true;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * Builds TEST_IMAGE from the Containerfile with buildah: both stages on `base`,
 * tini from the base (Debian's static one), RUN steps chrooted (no OCI runtime
 * needed to build). A proxy CA the host's Node trusts (NODE_EXTRA_CA_CERTS) is
 * mounted for the build stage's npm only. The image it replaces is removed.
 */
export async function buildImage(base: string): Promise<void> {
  const previous = (await imageExists(TEST_IMAGE))
    ? (await sh('podman', ['image', 'inspect', '--format', '{{.Id}}', TEST_IMAGE])).trim()
    : undefined;
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  const proxyCa =
    ca && existsSync(ca)
      ? [
          '--volume',
          `${ca}:/run/build-ca.pem:ro`,
          '--build-arg',
          'NODE_EXTRA_CA_CERTS=/run/build-ca.pem',
        ]
      : [];
  await sh('buildah', [
    'build',
    '--isolation',
    'chroot',
    '--file',
    join(ROOT, 'Containerfile'),
    '--build-arg',
    `BUILD_BASE=${base}`,
    '--build-arg',
    `RUNTIME_BASE=${base}`,
    '--build-arg',
    'TINI_FROM_BASE=/usr/bin/tini-static',
    ...proxyCa,
    '--tag',
    TEST_IMAGE,
    ROOT,
  ]);
  const built = (
    await sh('podman', ['image', 'inspect', '--format', '{{.Id}}', TEST_IMAGE])
  ).trim();
  if (previous && previous !== built) await sh('podman', ['rmi', previous]).catch(() => undefined);
}

/**
 * The OCI runtime podman starts containers with. runc by default: crun 1.8
 * (Debian 12's) refuses a host whose cgroup v2 hierarchy has a controller
 * while v1 is mounted (hybrid mode), as some VMs have; runc accepts it.
 */
const OCI_RUNTIME = process.env.QONTRACT_IMAGE_OCI_RUNTIME ?? 'runc';

/**
 * `podman run` as the checks run every container: the root filesystem
 * read-only with no tmpfs added (only the pod's volumes are writable, as
 * under `readOnlyRootFilesystem`), the host's network (the fakes listen on its
 * 127.0.0.1), and limits below any host's hard limits (podman's rootful
 * default raises them to the maximum, which a root without CAP_SYS_RESOURCE
 * may not).
 */
export function podmanRunArgs(
  name: string,
  options: readonly string[],
  image: string,
  command: readonly string[] = [],
): string[] {
  return [
    '--runtime',
    OCI_RUNTIME,
    'run',
    '--rm',
    '--name',
    name,
    '--read-only',
    '--read-only-tmpfs=false',
    '--network',
    'host',
    '--ulimit',
    'nofile=16384:16384',
    '--ulimit',
    'nproc=4096:4096',
    ...options,
    image,
    ...command,
  ];
}
