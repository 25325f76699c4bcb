import { type FakeRequest, type FakeResponse, type HttpFake, startHttpFake } from './http-fake.ts';

/*
 * A fake Jenkins: the parts of its Remote Access API (`.../api/json`) that
 * qontract-reconcile reads, with Jenkins' JSON shapes.
 *
 * Jenkins publishes no OpenAPI description. What this follows, and was checked
 * against:
 * - Jenkins' own API pages (`<any object>/api/`, "Controlling the amount of
 *   data you fetch") and the Remote Access API chapter of the Jenkins handbook
 *   (jenkins.io/doc/book/using/remote-access-api): `tree=` lists the properties
 *   to include, sub-properties in square brackets, `*` for all of them; array
 *   properties take a range `{M,N}` (M inclusive, N exclusive), `{M,}`, `{,N}`
 *   and `{N}` (just the Nth); Basic auth with a user and an API token; `POST
 *   /job/NAME/build` starts a build (201, `Location` of the queue item).
 * - The jenkins-users answer on `builds` vs `allBuilds`: since 1.485 `builds`
 *   holds the newest 100 builds only, `allBuilds` all of them (and only shows
 *   up when asked for in `tree`).
 * - Answers of real instances as python-jenkins and the original's
 *   `jenkins_api.py` read them: `_class` on every element of a polymorphic list
 *   (jobs, builds, actions) and on the answer's root, none on `Revision`
 *   (`lastBuiltRevision`); actions Jenkins does not export are `{}`; a build
 *   still running has `"result": null` and `"building": true`; builds newest
 *   first; a git build's `hudson.plugins.git.util.BuildData` action carries
 *   `lastBuiltRevision.SHA1`; an object asked for without sub-properties is
 *   just its `_class`.
 * - Status codes: 403 for anonymous requests (no Overall/Read), 401 for a
 *   wrong user or token, 404 (an HTML page) for an unknown job or build.
 */

/** A build's result; null while it runs. */
type FakeJenkinsResult = 'SUCCESS' | 'FAILURE' | 'ABORTED' | 'UNSTABLE' | 'NOT_BUILT' | null;

export interface FakeJenkinsBuildInput {
  /** Default: the job's next build number. */
  readonly number?: number;
  /** Default null: the build is running. */
  readonly result?: FakeJenkinsResult;
  /** Epoch milliseconds, as Jenkins; default now. */
  readonly timestamp?: number;
  /** The git commit the build checked out (a BuildData action); absent: no git action. */
  readonly commitSha?: string;
  /** The branch of that commit (default `master`). */
  readonly branch?: string;
}

interface FakeJenkinsBuild {
  readonly number: number;
  result: FakeJenkinsResult;
  readonly timestamp: number;
  readonly commitSha?: string;
  readonly branch: string;
}

export interface FakeJenkins extends HttpFake {
  readonly user: string;
  /** The API token the fake accepts for `user` (Basic auth `user:token`). */
  readonly token: string;
  /** Adds a job without builds (no-op when it exists). */
  addJob(name: string): void;
  /** Adds a build to a job (created if needed), newest first as Jenkins lists them; returns its number. */
  addBuild(job: string, build?: FakeJenkinsBuildInput): number;
  /** Finishes (or changes) a build's result. */
  setResult(job: string, number: number, result: FakeJenkinsResult): void;
  /** Deletes every build of a job (a cleared history); the numbering goes on. */
  clearBuilds(job: string): void;
  /** Requests that change Jenkins (every POST). */
  writeCount(): number;
}

const JOB_CLASS = 'hudson.model.FreeStyleProject';
const BUILD_CLASS = 'hudson.model.FreeStyleBuild';
/** `builds` holds the newest 100 builds (Jenkins ≥ 1.485); `allBuilds` every build. */
const NEWEST_BUILDS = 100;

/** The jobs and builds of the fake, and their answers as Jenkins models them. */
class JenkinsJobs {
  readonly jobs = new Map<string, { builds: FakeJenkinsBuild[]; next: number }>();
  /** The fake's URL, once it listens. */
  base = '';

  addJob(name: string): { builds: FakeJenkinsBuild[]; next: number } {
    if (!this.jobs.has(name)) this.jobs.set(name, { builds: [], next: 1 });
    return this.jobs.get(name)!;
  }
  addBuild(name: string, input: FakeJenkinsBuildInput = {}): number {
    const job = this.addJob(name);
    const number = input.number ?? job.next;
    job.next = Math.max(job.next, number + 1);
    job.builds.push({
      number,
      result: input.result === undefined ? null : input.result,
      timestamp: input.timestamp ?? Date.now(),
      ...(input.commitSha === undefined ? {} : { commitSha: input.commitSha }),
      branch: input.branch ?? 'master',
    });
    job.builds.sort((a, b) => b.number - a.number);
    return number;
  }
  jobUrl(name: string): string {
    return `${this.base}/job/${encodeURIComponent(name)}/`;
  }
  buildRef(name: string, b: FakeJenkinsBuild | undefined) {
    return b
      ? { _class: BUILD_CLASS, number: b.number, url: `${this.jobUrl(name)}${b.number}/` }
      : null;
  }

  buildBody(name: string, b: FakeJenkinsBuild) {
    const actions: unknown[] = [
      {
        _class: 'hudson.model.CauseAction',
        causes: [
          {
            _class: 'hudson.triggers.SCMTrigger$SCMTriggerCause',
            shortDescription: 'Started by an SCM change',
          },
        ],
      },
      // An action Jenkins does not export shows up as an empty object.
      {},
    ];
    if (b.commitSha !== undefined) {
      const revision = {
        SHA1: b.commitSha,
        branch: [{ SHA1: b.commitSha, name: `refs/remotes/origin/${b.branch}` }],
      };
      actions.push(
        {
          _class: 'hudson.plugins.git.util.BuildData',
          buildsByBranchName: {
            [`refs/remotes/origin/${b.branch}`]: {
              _class: 'hudson.plugins.git.util.Build',
              buildNumber: b.number,
              buildResult: null,
              marked: revision,
              revision,
            },
          },
          lastBuiltRevision: revision,
          remoteUrls: [`https://github.com/example/${name}.git`],
          scmName: '',
        },
        { _class: 'hudson.plugins.git.GitTagAction' },
      );
    }
    actions.push({});
    const building = b.result === null;
    return {
      _class: BUILD_CLASS,
      actions,
      artifacts: [],
      building,
      description: null,
      displayName: `#${b.number}`,
      duration: building ? 0 : 60_000,
      estimatedDuration: 60_000,
      executor: building ? { _class: 'hudson.model.OneOffExecutor' } : null,
      fullDisplayName: `${name} #${b.number}`,
      id: String(b.number),
      keepLog: false,
      number: b.number,
      queueId: b.number,
      result: b.result,
      timestamp: b.timestamp,
      url: `${this.jobUrl(name)}${b.number}/`,
      builtOn: '',
      changeSet: { _class: 'hudson.plugins.git.GitChangeSetList', items: [], kind: 'git' },
      culprits: [],
    };
  }

  /** The job as Jenkins models it; `full` puts whole builds in the lists (for `tree=`). */
  jobBody(name: string, full: boolean) {
    const { builds, next } = this.jobs.get(name)!;
    const done = builds.filter((b) => b.result !== null);
    const find = (pick: (b: FakeJenkinsBuild) => boolean) => {
      const b = builds.find(pick);
      return full ? (b ? this.buildBody(name, b) : null) : this.buildRef(name, b);
    };
    const list = (bs: FakeJenkinsBuild[]) =>
      bs.map((b) => (full ? this.buildBody(name, b) : this.buildRef(name, b)));
    const last = builds[0];
    const color =
      last === undefined
        ? 'notbuilt'
        : `${colorOf(done[0]?.result ?? null)}${last.result === null ? '_anime' : ''}`;
    return {
      _class: JOB_CLASS,
      actions: [{}, { _class: 'com.cloudbees.plugins.credentials.ViewCredentialsAction' }],
      description: '',
      displayName: name,
      displayNameOrNull: null,
      fullDisplayName: name,
      fullName: name,
      name,
      url: this.jobUrl(name),
      buildable: true,
      builds: list(builds.slice(0, NEWEST_BUILDS)),
      color,
      firstBuild: find((b) => b === builds[builds.length - 1]),
      healthReport: [],
      inQueue: false,
      keepDependencies: false,
      lastBuild: find(() => true),
      lastCompletedBuild: find((b) => b.result !== null),
      lastFailedBuild: find((b) => b.result === 'FAILURE'),
      lastStableBuild: find((b) => b.result === 'SUCCESS'),
      lastSuccessfulBuild: find((b) => b.result === 'SUCCESS' || b.result === 'UNSTABLE'),
      lastUnstableBuild: find((b) => b.result === 'UNSTABLE'),
      lastUnsuccessfulBuild: find((b) => b.result !== null && b.result !== 'SUCCESS'),
      nextBuildNumber: next,
      property: [],
      queueItem: null,
      concurrentBuild: false,
      disabled: false,
      scm: { _class: 'hudson.plugins.git.GitSCM' },
      // Hidden unless `tree` asks for it.
      ...(full ? { allBuilds: list(builds) } : {}),
    };
  }

  rootBody(full: boolean) {
    return {
      _class: 'hudson.model.Hudson',
      assignedLabels: [{ name: 'built-in' }],
      mode: 'NORMAL',
      nodeDescription: "the Jenkins controller's built-in node",
      nodeName: '',
      numExecutors: 2,
      description: null,
      jobs: [...this.jobs.keys()].map((name) =>
        full
          ? this.jobBody(name, true)
          : {
              _class: JOB_CLASS,
              name,
              url: this.jobUrl(name),
              color: this.jobBody(name, false).color,
            },
      ),
      quietingDown: false,
      slaveAgentPort: -1,
      url: `${this.base}/`,
      useCrumbs: true,
      useSecurity: true,
      views: [{ _class: 'hudson.model.AllView', name: 'all', url: `${this.base}/` }],
    };
  }
}

/**
 * Starts a fake Jenkins on 127.0.0.1. Routes: `GET /api/json`,
 * `GET /job/NAME/api/json`, `GET /job/NAME/{N|lastBuild|lastSuccessfulBuild|
 * lastCompletedBuild}/api/json`, `POST /job/NAME/build`; `tree=` everywhere.
 */
export async function startFakeJenkins(
  options: {
    user?: string;
    token?: string;
    jobs?: Readonly<Record<string, readonly FakeJenkinsBuildInput[]>>;
    latencyMs?: number;
    port?: number;
  } = {},
): Promise<FakeJenkins> {
  const user = options.user ?? 'qontract-bot';
  const token = options.token ?? '11a0fake0jenkins0api0token0aa';
  let writes = 0;
  let queueId = 0;

  const model = new JenkinsJobs();
  const { jobs } = model;
  for (const [name, builds] of Object.entries(options.jobs ?? {})) {
    model.addJob(name);
    for (const b of builds) model.addBuild(name, b);
  }

  const handle = (req: FakeRequest): FakeResponse => {
    const auth = checkAuth(req.headers.authorization, user, token);
    if (auth) return auth;
    const path = req.url.pathname;
    if (req.method === 'POST') {
      writes += 1;
      const m = /^\/job\/([^/]+)\/build\/?$/.exec(path);
      const name = m ? decodeURIComponent(m[1] ?? '') : undefined;
      if (name === undefined || !jobs.has(name)) return notFound();
      model.addBuild(name);
      queueId += 1;
      return { status: 201, headers: { Location: `${model.base}/queue/item/${queueId}/` } };
    }
    if (req.method !== 'GET') return { status: 405, body: '' };
    const treeParam = req.url.searchParams.get('tree');
    let tree: TreeSpec | undefined;
    if (treeParam !== null) {
      try {
        tree = parseTree(treeParam);
      } catch (e) {
        return { status: 400, body: `Malformed tree expression: ${(e as Error).message}` };
      }
    }
    const answer = (body: Record<string, unknown>) => ({
      status: 200,
      body: tree ? filterTree(body, tree) : body,
      headers: { 'X-Jenkins': '2.479.3' },
    });
    if (path === '/api/json') return answer(model.rootBody(tree !== undefined));
    const m = /^\/job\/([^/]+)\/(?:([^/]+)\/)?api\/json$/.exec(path);
    if (!m) return notFound();
    const name = decodeURIComponent(m[1] ?? '');
    if (!jobs.has(name)) return notFound();
    const which = m[2];
    if (which === undefined) return answer(model.jobBody(name, tree !== undefined));
    const job = model.jobBody(name, true) as Record<string, unknown>;
    const build = /^\d+$/.test(which)
      ? (jobs
          .get(name)
          ?.builds.filter((b) => b.number === Number(which))
          .map((b) => model.buildBody(name, b))[0] ?? null)
      : PERMALINKS.has(which)
        ? job[which]
        : null;
    return build ? answer(build as Record<string, unknown>) : notFound();
  };

  const http = await startHttpFake({
    handle,
    ...(options.latencyMs === undefined ? {} : { latencyMs: options.latencyMs }),
    ...(options.port === undefined ? {} : { port: options.port }),
  });
  model.base = http.url;
  return Object.assign(http, {
    user,
    token,
    addJob: (name: string) => {
      model.addJob(name);
    },
    addBuild: (name: string, input?: FakeJenkinsBuildInput) => model.addBuild(name, input),
    setResult: (name: string, number: number, result: FakeJenkinsResult) => {
      const build = jobs.get(name)?.builds.find((b) => b.number === number);
      if (!build) throw new Error(`fake Jenkins: no build ${name} #${number}`);
      build.result = result;
    },
    clearBuilds: (name: string) => {
      model.addJob(name).builds = [];
    },
    writeCount: () => writes,
  });
}

const PERMALINKS = new Set([
  'lastBuild',
  'lastCompletedBuild',
  'lastFailedBuild',
  'lastStableBuild',
  'lastSuccessfulBuild',
  'lastUnstableBuild',
  'lastUnsuccessfulBuild',
  'firstBuild',
]);

function colorOf(result: FakeJenkinsResult): string {
  switch (result) {
    case 'SUCCESS':
      return 'blue';
    case 'FAILURE':
      return 'red';
    case 'UNSTABLE':
      return 'yellow';
    case 'ABORTED':
      return 'aborted';
    default:
      return 'notbuilt';
  }
}

function checkAuth(header: string | undefined, user: string, token: string): FakeResponse | null {
  if (header === undefined) {
    // Anonymous lacks Overall/Read on a secured instance.
    return {
      status: 403,
      headers: {
        'X-You-Are-Authenticated-As': 'anonymous',
        'X-Required-Permission': 'hudson.model.Hudson.Read',
        'Content-Type': 'text/html;charset=utf-8',
      },
      body: '<html><head><title>Authentication required</title></head><body>Authentication required</body></html>',
    };
  }
  const m = /^Basic (.+)$/i.exec(header);
  const decoded = m ? Buffer.from(m[1] ?? '', 'base64').toString('utf8') : '';
  const sep = decoded.indexOf(':');
  const who = sep < 0 ? decoded : decoded.slice(0, sep);
  if (decoded === `${user}:${token}`) return null;
  return {
    status: 401,
    headers: { 'Content-Type': 'text/html;charset=utf-8' },
    body: `<html><head><title>Error 401 Invalid password/token for user: ${who}</title></head><body><h2>HTTP ERROR 401 Invalid password/token for user: ${who}</h2></body></html>`,
  };
}

function notFound(): FakeResponse {
  return {
    status: 404,
    headers: { 'Content-Type': 'text/html;charset=utf-8' },
    body: '<html><head><title>Error 404 Not Found</title></head><body><h2>HTTP ERROR 404 Not Found</h2></body></html>',
  };
}

/** One property of a `tree=` expression: its sub-properties and range. */
interface TreeNode {
  readonly name: string;
  readonly children?: TreeSpec;
  readonly range?: { readonly from: number; readonly to: number };
}
type TreeSpec = readonly TreeNode[];

/** Parses `a,b[c,d[e]]{0,10},*` (the grammar of Jenkins' `tree` parameter). */
function parseTree(text: string): TreeSpec {
  let at = 0;
  const list = (): TreeNode[] => {
    const nodes: TreeNode[] = [];
    for (;;) {
      const start = at;
      while (at < text.length && !'[]{},'.includes(text[at] ?? '')) at++;
      const name = text.slice(start, at).trim();
      if (name === '') throw new Error(`a property name is missing at ${start}`);
      let children: TreeSpec | undefined;
      let range: TreeNode['range'];
      if (text[at] === '[') {
        at++;
        children = list();
        if (text[at] !== ']') throw new Error(`']' expected at ${at}`);
        at++;
      }
      if (text[at] === '{') {
        const end = text.indexOf('}', at);
        if (end < 0) throw new Error(`'}' expected after ${at}`);
        range = parseRange(text.slice(at + 1, end));
        at = end + 1;
      }
      nodes.push({ name, ...(children ? { children } : {}), ...(range ? { range } : {}) });
      if (text[at] !== ',') return nodes;
      at++;
    }
  };
  const spec = list();
  if (at !== text.length) throw new Error(`unexpected '${text[at]}' at ${at}`);
  return spec;
}

/** `{M,N}`, `{M,}`, `{,N}`, `{N}`: M inclusive, N exclusive. */
function parseRange(text: string): { from: number; to: number } {
  const num = (s: string, dflt: number) => {
    if (s.trim() === '') return dflt;
    if (!/^\d+$/.test(s.trim())) throw new Error(`bad range {${text}}`);
    return Number(s);
  };
  const comma = text.indexOf(',');
  if (comma < 0) {
    const n = num(text, Number.NaN);
    if (Number.isNaN(n)) throw new Error(`bad range {${text}}`);
    return { from: n, to: n + 1 };
  }
  return {
    from: num(text.slice(0, comma), 0),
    to: num(text.slice(comma + 1), Number.POSITIVE_INFINITY),
  };
}

/**
 * The object cut down to the properties of `spec`, in the model's order.
 * `_class` is always kept; an object without sub-properties asked for is just
 * its `_class` (or `{}`); array elements are filtered one by one.
 */
function filterTree(value: Record<string, unknown>, spec: TreeSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if ('_class' in value) out._class = value._class;
  for (const [key, v] of Object.entries(value)) {
    if (key === '_class') continue;
    const node = spec.find((n) => n.name === key) ?? spec.find((n) => n.name === '*');
    if (node === undefined) continue;
    out[key] = filterValue(v, node);
  }
  return out;
}

function filterValue(v: unknown, node: TreeNode): unknown {
  if (Array.isArray(v)) {
    const items = node.range ? v.slice(node.range.from, node.range.to) : v;
    // The range applies to this list only, not to lists inside its elements.
    const each: TreeNode = {
      name: node.name,
      ...(node.children ? { children: node.children } : {}),
    };
    return items.map((item) => filterValue(item, each));
  }
  if (v !== null && typeof v === 'object') {
    return filterTree(v as Record<string, unknown>, node.children ?? []);
  }
  return v;
}
