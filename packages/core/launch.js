// Runs a TypeScript entry point of this workspace under Node >= 22.12 with
// native type stripping, with a V8 heap sized for the container it runs in.
//
// - When the node running this file is older, it re-executes itself with the
//   Node 24 that `npm install` placed in the workspace (the `node`
//   devDependency), so the commands work on machines whose system Node is 20.
// - It re-executes itself with the collector flags of GC_FLAGS (a small young
//   generation, an old generation that grows 30 % past its live data) unless
//   node was given them or QONTRACT_GC_TUNING=off.
// - In a container with a memory limit (cgroup v2 `memory.max`, v1
//   `memory.limit_in_bytes`) it re-executes itself with a
//   `--max-old-space-size` derived from that limit, unless one was given
//   (NODE_OPTIONS or the node command line) or QONTRACT_MAX_OLD_SPACE_MB says
//   otherwise. Node's own default is a quarter of the limit: too small for a
//   large run in a tight pod, while without any limit V8 lets the heap grow to
//   4 GiB before collecting hard, which is how a looping pod's RSS creeps up.
// - It trusts the system's CA bundle (SSL_CERT_FILE, else the distribution's
//   file) besides Node's own CAs: Node ignores it otherwise, so a pod whose
//   internalCertificates init container fills /etc/pki would still fail TLS
//   against internal endpoints (see decideCaBundle).
//
// Plain JavaScript on purpose: this file must run on Node 20, before any
// TypeScript can be loaded.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import module from 'node:module';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import tls from 'node:tls';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
const modern = major > 22 || (major === 22 && minor >= 12);

/** The environment variable that sets the heap size (MiB) or, with 0, turns the sizing off. */
export const HEAP_SIZE_ENV = 'QONTRACT_MAX_OLD_SPACE_MB';

const MIB = 2 ** 20;
/** Share of the limit the old space may take. */
const HEAP_SHARE = 0.75;
/**
 * Memory kept outside the old space: the young generation (Node 24 on x64
 * reports a heap_size_limit 192 MiB above the old-space size by default, 48 MiB
 * with GC_FLAGS' 16 MiB semi-spaces), code, sockets, TLS and other native
 * buffers. Kept as measured before GC_FLAGS, on the safe side. A
 * looping run-integration was seen at about 377 MiB of RSS under a 160 MiB
 * old-space cap (issue 12): some 220 MiB outside the old space.
 */
const HEADROOM_MIB = 320;
/** No smaller heap is set (nor more than half the limit): below it a run cannot do its work. */
const FLOOR_MIB = 128;
/** cgroup v1 says "no limit" with the largest page-aligned 64-bit value; anything near it is none. */
const UNLIMITED_BYTES = 2 ** 60;

/**
 * The `--max-old-space-size` (MiB) for a container memory limit in bytes:
 * 75 % of the limit, at least 320 MiB below it, never under 128 MiB (or half
 * the limit when that is smaller). `undefined` when there is no limit.
 *
 * @param {number | undefined} limitBytes
 * @returns {number | undefined}
 */
export function heapSizeForMemoryLimit(limitBytes) {
  if (limitBytes === undefined || !Number.isFinite(limitBytes) || limitBytes <= 0) return undefined;
  if (limitBytes >= UNLIMITED_BYTES) return undefined;
  const limit = limitBytes / MIB;
  const sized = Math.min(limit * HEAP_SHARE, limit - HEADROOM_MIB);
  return Math.floor(Math.max(sized, Math.min(FLOOR_MIB, limit / 2)));
}

/**
 * Whether node's options (NODE_OPTIONS, its command line) give the option of
 * `flag` (`--name=value`), as node accepts it: `--name=N` or `--name N`, with
 * `-` or `_` between the words.
 *
 * @param {string} flag
 * @param {readonly string[]} options
 */
function givenOption(flag, options) {
  const name = flag.slice(2).split('=')[0].split('-').join('[-_]');
  const pattern = new RegExp(`(^|\\s)--${name}([=\\s]|$)`);
  return options.some((s) => pattern.test(s));
}

/**
 * What the launcher does about the heap size: the flag to add, or none, and why.
 * An explicit `--max-old-space-size` (NODE_OPTIONS or node's command line)
 * always wins; then QONTRACT_MAX_OLD_SPACE_MB (0 turns the sizing off); then
 * the container's memory limit.
 *
 * @param {{ nodeOptions?: string, execArgv?: readonly string[], override?: string,
 *           limitBytes?: number }} input
 * @returns {{ flag?: string, reason: string }}
 */
export function decideHeapSize(input) {
  if (givenOption('--max-old-space-size', [input.nodeOptions ?? '', ...(input.execArgv ?? [])]))
    return { reason: 'explicit --max-old-space-size' };
  const override = input.override?.trim();
  if (override !== undefined && override !== '') {
    if (!/^\d+$/.test(override)) {
      throw new Error(
        `${HEAP_SIZE_ENV} must be a whole number of MiB (0 turns the automatic heap size off), got "${input.override}"`,
      );
    }
    const mib = Number(override);
    if (mib === 0) return { reason: `${HEAP_SIZE_ENV}=0` };
    return { flag: `--max-old-space-size=${mib}`, reason: HEAP_SIZE_ENV };
  }
  const mib = heapSizeForMemoryLimit(input.limitBytes);
  if (mib === undefined) return { reason: 'no container memory limit' };
  return {
    flag: `--max-old-space-size=${mib}`,
    reason: `container memory limit ${Math.round((input.limitBytes ?? 0) / MIB)} MiB`,
  };
}

/** The environment variable that turns the collector's tuning off (`off`) or on (`on`, the default). */
export const GC_TUNING_ENV = 'QONTRACT_GC_TUNING';

/**
 * V8 flags for the collector, each added unless node was given it. Measured on a
 * cold openshift-resources run of 50,000 objects (docs/benchmarks.md, "Memory
 * of a full reconcile, round 3"): without them Node 24 gives the young
 * generation two 64 MiB semi-spaces and lets the old generation grow to
 * several times what stays alive, so the peak RSS was 540-600 MiB for about
 * 200 MiB of live heap; with them 415-455 MiB, at the same CPU time (loops that
 * keep caches between runs pay for more full collections, see the docs).
 * - `--max-semi-space-size=16`: the young generation of Node 20 (16 MiB
 *   semi-spaces). Larger ones only hold more garbage and more not-yet-freed
 *   network buffers between scavenges.
 * - `--heap-growing-percent=30`: the next full collection comes once the old
 *   generation has grown 30 % past what survived the last one (as Go's GOGC),
 *   instead of V8's factor of up to 4. It follows the live data, so a larger
 *   app-interface still gets the heap it needs, up to --max-old-space-size.
 */
export const GC_FLAGS = Object.freeze(['--max-semi-space-size=16', '--heap-growing-percent=30']);

/**
 * The first line of every command's bin: node is started with GC_FLAGS
 * (`env -S` splits them), so a command run from PATH needs no second start to
 * get them (about 0.15 s on a 2-core machine). Where node is started otherwise
 * (`node bin.js`), the launcher re-executes it with the flags.
 */
export const SHEBANG = `#!/usr/bin/env -S node ${GC_FLAGS.join(' ')}`;

/**
 * Whether QONTRACT_GC_TUNING says `off` (unset or empty: on). Throws on any other value.
 *
 * @param {string | undefined} value
 */
function gcTuningOff(value) {
  const setting = value?.trim() || 'on';
  if (setting !== 'on' && setting !== 'off') {
    throw new Error(`${GC_TUNING_ENV} must be "on" or "off", got "${value}"`);
  }
  return setting === 'off';
}

/**
 * The collector flags the launcher adds: those of GC_FLAGS that node was not
 * given (NODE_OPTIONS or node's command line), none with QONTRACT_GC_TUNING=off.
 *
 * @param {{ nodeOptions?: string, execArgv?: readonly string[], setting?: string }} input
 * @returns {{ flags: string[], reason: string }}
 */
export function decideGcTuning(input) {
  if (gcTuningOff(input.setting)) return { flags: [], reason: `${GC_TUNING_ENV}=off` };
  const options = [input.nodeOptions ?? '', ...(input.execArgv ?? [])];
  const flags = GC_FLAGS.filter((flag) => !givenOption(flag, options));
  return { flags, reason: flags.length ? 'collector tuning' : 'collector flags given' };
}

/**
 * Node's options for the run: `execArgv` without the collector flags that must
 * not apply, then what launchFlags adds. A bin's first line gives GC_FLAGS on
 * node's command line, where they win over NODE_OPTIONS; they are taken back
 * with QONTRACT_GC_TUNING=off, and each one whose option NODE_OPTIONS gives
 * (the user's value applies). The launcher starts node again when the result
 * differs from the options it was started with. Throws on a bad setting.
 *
 * @param {Readonly<Record<string, string | undefined>>} [env]
 * @param {readonly string[]} [execArgv]
 * @returns {string[]}
 */
export function launchExecArgv(env = process.env, execArgv = process.execArgv) {
  const off = gcTuningOff(env[GC_TUNING_ENV]);
  const nodeOptions = [env.NODE_OPTIONS ?? ''];
  const kept = execArgv.filter(
    (a) => !GC_FLAGS.includes(a) || !(off || givenOption(a, nodeOptions)),
  );
  return [...kept, ...launchFlags(env, kept)];
}

/**
 * Every V8 flag the launcher adds for this environment: the heap size
 * (decideHeapSize) and the collector's tuning (decideGcTuning). The benchmarks
 * and the MR check start their child processes with these (`execArgv` empty).
 * Throws on a bad setting.
 *
 * @param {Readonly<Record<string, string | undefined>>} [env]
 * @param {readonly string[]} [execArgv]
 * @returns {string[]}
 */
export function launchFlags(env = process.env, execArgv = process.execArgv) {
  const heap = decideHeapSize({
    nodeOptions: env.NODE_OPTIONS,
    execArgv,
    override: env[HEAP_SIZE_ENV],
    limitBytes: process.platform === 'linux' ? readContainerMemoryLimit() : undefined,
  });
  const gc = decideGcTuning({
    nodeOptions: env.NODE_OPTIONS,
    execArgv,
    setting: env[GC_TUNING_ENV],
  });
  return [...(heap.flag ? [heap.flag] : []), ...gc.flags];
}

/**
 * The memory limit of the cgroup this process runs in, in bytes, or
 * `undefined` when there is none (or no cgroup file can be read). Looks at the
 * process's own cgroup first (from /proc/self/cgroup), then at the root of the
 * mount, which is the container's own cgroup under a cgroup namespace.
 *
 * @param {string} [root] where the cgroup file system is mounted
 * @param {string} [procSelfCgroup] the text of /proc/self/cgroup
 * @returns {number | undefined}
 */
export function readContainerMemoryLimit(root = '/sys/fs/cgroup', procSelfCgroup) {
  let membership = procSelfCgroup;
  if (membership === undefined) membership = readText('/proc/self/cgroup') ?? '';
  const candidates = [];
  for (const line of membership.split('\n')) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line.trim()) ?? [];
    if (path === undefined || path === '/') continue;
    if (controllers === '') candidates.push(join(root, path, 'memory.max'));
    else if (controllers.split(',').includes('memory'))
      candidates.push(join(root, 'memory', path, 'memory.limit_in_bytes'));
  }
  candidates.push(join(root, 'memory.max'), join(root, 'memory', 'memory.limit_in_bytes'));
  for (const file of candidates) {
    const text = readText(file)?.trim();
    if (text === undefined) continue;
    if (text === 'max') return undefined;
    const bytes = Number(text);
    if (!Number.isFinite(bytes) || bytes <= 0 || bytes >= UNLIMITED_BYTES) return undefined;
    return bytes;
  }
  return undefined;
}

function readText(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The CA bundles of the distributions; the launcher trusts the first that
 * exists. RHEL/UBI's first: the image's, and the file a pod's
 * internalCertificates init container brings (it copies its /etc/pki, whose
 * bundle holds the internal CAs, into the volume mounted at /etc/pki).
 */
export const SYSTEM_CA_BUNDLES = Object.freeze([
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
  '/etc/ssl/certs/ca-certificates.crt',
]);

/**
 * The CA bundle the launcher adds to Node's own CAs, and why: nothing when
 * node already reads one (NODE_EXTRA_CA_CERTS, `--use-system-ca`), else
 * SSL_CERT_FILE (as OpenSSL and Python's ssl read it), else the first of
 * SYSTEM_CA_BUNDLES that exists. The system's bundle is what the original's
 * Python trusts on its RHEL image.
 *
 * @param {Readonly<Record<string, string | undefined>>} [env]
 * @param {readonly string[]} [execArgv]
 * @param {(file: string) => boolean} [exists]
 * @returns {{ file?: string, reason: string }}
 */
export function decideCaBundle(
  env = process.env,
  execArgv = process.execArgv,
  exists = existsSync,
) {
  if (env.NODE_EXTRA_CA_CERTS) return { reason: 'NODE_EXTRA_CA_CERTS' };
  if (givenOption('--use-system-ca', [env.NODE_OPTIONS ?? '', ...execArgv]))
    return { reason: '--use-system-ca' };
  const explicit = env.SSL_CERT_FILE?.trim();
  if (explicit) return { file: explicit, reason: 'SSL_CERT_FILE' };
  const file = SYSTEM_CA_BUNDLES.find((f) => exists(f));
  return file ? { file, reason: 'the system CA bundle' } : { reason: 'no system CA bundle' };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * Adds the certificates of the PEM file `file` to the CAs every TLS client of
 * the process trusts by default (https, fetch). Throws a message naming the
 * file when it cannot be read or holds no certificate.
 *
 * @param {string} file
 * @param {string} reason where the file's name came from, for the message
 */
function trustCaBundle(file, reason) {
  let pem;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read the CA bundle ${file} (${reason}): ${e.code ?? e.message}`);
  }
  const certificates = pem.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) {
    throw new Error(`the CA bundle ${file} (${reason}) holds no PEM certificate`);
  }
  try {
    tls.setDefaultCACertificates([...tls.getCACertificates('default'), ...certificates]);
  } catch (e) {
    throw new Error(`the CA bundle ${file} (${reason}): ${e.message}`);
  }
}

/**
 * Runs `exportName` of the TypeScript module `entry` (a path). `program` names the command in
 * the error printed when no suitable Node exists.
 */
export async function launch(entry, exportName, program = 'qontract-reconcile') {
  let execArgv;
  try {
    execArgv = launchExecArgv();
  } catch (e) {
    console.error(`${program}: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
  const ca = decideCaBundle();
  // A Node without tls.setDefaultCACertificates (before 24.5) takes extra CAs
  // only at start: it is started again with NODE_EXTRA_CA_CERTS.
  const caAtStart = ca.file !== undefined && typeof tls.setDefaultCACertificates !== 'function';
  if (caAtStart) process.env.NODE_EXTRA_CA_CERTS = ca.file;
  if (!modern) {
    const node = workspaceNode();
    if (!node) {
      console.error(
        `${program} needs Node >= 22.12 (found ${process.versions.node}); run 'npm install' in the repository first.`,
      );
      process.exit(1);
    }
    await reexec(node, [...execArgv, process.argv[1], ...process.argv.slice(2)]);
    return;
  }
  if (caAtStart || execArgv.join('\0') !== process.execArgv.join('\0')) {
    await reexec(process.execPath, [...execArgv, process.argv[1], ...process.argv.slice(2)]);
    return;
  }
  if (ca.file !== undefined) {
    try {
      trustCaBundle(ca.file, ca.reason);
    } catch (e) {
      console.error(`${program}: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    }
  }
  // The compiled code of the modules is kept between runs (Node's compile
  // cache, in the system's temp directory, as NODE_COMPILE_CACHE would keep
  // it): a command starts in about half the time once it ran before, which
  // every CronJob run and every process of an MR check pays. Nothing fails
  // when the directory cannot be written; NODE_DISABLE_COMPILE_CACHE=1 turns
  // it off, NODE_COMPILE_CACHE=DIR puts it elsewhere.
  module.enableCompileCache?.();
  // A command runs in production unless told otherwise: graphql-js then
  // skips its development checks (a second instanceof test for every value
  // it completes), which halves the embedded engine's answer to a large
  // query. Set before any module reads it; NODE_ENV=development keeps them.
  process.env.NODE_ENV ??= 'production';
  const mod = await import(pathToFileURL(entry).href);
  await mod[exportName]();
}

/** The Node 24 of the workspace's `node` devDependency, from here upwards. */
function workspaceNode() {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'node_modules', 'node', 'bin', 'node');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * Replaces this process with `node args...`: in place where Node can
 * (process.execve keeps the pid, so a pod's SIGTERM reaches the run), else as
 * a child whose exit becomes ours. SIGTERM is passed on (a pod's kubelet sends
 * it to our pid only); SIGINT and SIGHUP are not, because a terminal sends
 * them to the whole process group, child included, and a second SIGINT would
 * make the run stop at once.
 */
async function reexec(node, args) {
  if (typeof process.execve === 'function') {
    process.execve(node, [node, ...args], process.env);
  }
  const child = spawn(node, args, { stdio: 'inherit' });
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  process.on('SIGINT', () => {});
  process.on('SIGHUP', () => {});
  const [code, signal] = await new Promise((resolve) =>
    child.on('exit', (c, s) => resolve([c, s])),
  );
  process.exit(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0));
}
