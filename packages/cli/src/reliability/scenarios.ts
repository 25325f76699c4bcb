import { join } from 'node:path';
import type { ExampleEnvironment, FakeGitHub } from '@qontract/testing';
import type { FakeGitlab } from '@qontract/testing/fake-gitlab';
import type { HttpFaults } from '@qontract/testing/http-fake';
import { expect } from 'vitest';
import {
  addSecondOrg,
  DESIRED,
  githubEnv,
  ORG,
  startExampleGitHub,
  teamState,
} from '../e2e/github-fixture.ts';
import { EXAMPLE_SCHEDULE, type GitlabEnvironment } from '../e2e/gitlab-environment.ts';
import { editFile, objectNames, runQontractReconcile } from '../e2e/harness.ts';

type JsonObject = { [key: string]: unknown };

/**
 * What one cell of the fault matrix runs against: the example environment
 * (simulated clusters, a copy of app-interface) and, for the GitHub and
 * GitLab integrations, their fake. `env` is what every CLI run of the cell
 * gets as process environment.
 */
export interface World {
  readonly kube: ExampleEnvironment;
  readonly github?: FakeGitHub;
  readonly gitlab?: FakeGitlab;
  /** The HTTP fake the integration writes to (GitHub or GitLab); undefined for clusters. */
  readonly http?: { readonly faults: HttpFaults; close(): Promise<void> };
  readonly env: Record<string, string>;
  /** The faulty target's request paths when they are known only once set up (ids). */
  readonly faultyPath?: RegExp;
  /** Every write any fake saw since the last reset (`cluster verb path` / `METHOD path`). */
  writes(): string[];
  resetLogs(): void;
}

export interface Starters {
  readonly kube: (options?: { namespaces?: boolean }) => Promise<ExampleEnvironment>;
  readonly gitlab: () => Promise<GitlabEnvironment>;
}

/**
 * One integration that writes, set up so that its next run has work on every
 * target (a create or update on each cluster, org or group) and at least one
 * deletion on a healthy target: a fault on `faulty` must then leave the
 * healthy targets reconciled and hold every deletion back (with
 * `scopedRemovals`, every deletion of the faulty target).
 */
export interface Scenario {
  readonly integration: string;
  /** What answers the integration's writes: the simulated clusters or an HTTP fake. */
  readonly service: 'kube' | 'github' | 'gitlab';
  /** The cluster, organisation or group the per-target faults hit; errors must name it. */
  readonly faulty: string;
  /** For HTTP fakes: the request paths of the faulty target (what a fault rule matches). */
  readonly faultyPath?: RegExp;
  /**
   * The integration scopes its removals by target (github's organisations,
   * gitlab-members' groups): a fault of the faulty target holds back its
   * removals only, and the healthy targets' removals go on.
   */
  readonly scopedRemovals?: boolean;
  /** The state before the run under test. */
  setup(start: Starters): Promise<World>;
  /** The healthy targets got their creates and updates (and, with `scopedRemovals`, their deletions). */
  healthyReconciled(world: World): void;
  /** Every target converged, deletions included (a run without errors). */
  allReconciled(world: World): void;
  /** The deletions that took effect (objects deleted, members removed). */
  deletions(world: World): string[];
  /**
   * For the expired-continue-token fault: objects that make the integration's
   * list of the faulty cluster span more than one page (500 items a page).
   */
  readonly bigList?: () => JsonObject[];
}

function kubeWorld(kube: ExampleEnvironment): World {
  return {
    kube,
    env: {},
    writes: () =>
      kube.server
        .mutatingRequests()
        .map((r) => `${r.cluster} ${r.verb} ${r.resource}/${r.namespace}/${r.name}`),
    resetLogs: () => kube.server.resetLog(),
  };
}

const kubeDeletes = (w: World) =>
  w.kube.server
    .mutatingRequests({ verb: 'delete' })
    .map((r) => `${r.cluster} delete ${r.resource}/${r.namespace}/${r.name}`);

async function converge(kube: ExampleEnvironment, integration: string): Promise<void> {
  const run = await runQontractReconcile(['--config', kube.configPath, integration]);
  if (run.code !== 0) throw new Error(`${integration} did not converge:\n${run.stderr}`);
}

/** Many unmanaged objects of one kind: the list of their namespace takes two pages. */
function fillers(make: (name: string) => JsonObject, count = 520): () => JsonObject[] {
  return () =>
    Array.from({ length: count }, (_, i) => make(`filler-${String(i).padStart(4, '0')}`));
}

// ---------------------------------------------------------------- openshift-resources

const CONFIG_MAP_HOMES = [
  ['appint-ex-01', 'example-app-stage'],
  ['appint-ex-02', 'example-app-production'],
  ['appint-ex-k8s', 'example-app-edge'],
] as const;

const configMaps = (w: World, cluster: string, namespace: string) =>
  objectNames(w.kube, cluster, 'v1', 'ConfigMap', namespace).filter((n) =>
    n.startsWith('example-app-config'),
  );

const openshiftResources: Scenario = {
  integration: 'openshift-resources',
  service: 'kube',
  faulty: 'appint-ex-02',
  async setup(start) {
    const kube = await start.kube({ namespaces: true });
    await converge(kube, 'openshift-resources');
    // A rename: the next run applies the new name and deletes the old one everywhere.
    await editFile(join(kube.appInterfaceDir, 'resources/example-app/configmap.yml'), (text) =>
      text.replace('name: example-app-config\n', 'name: example-app-config-v2\n'),
    );
    return kubeWorld(kube);
  },
  healthyReconciled(w) {
    expect(configMaps(w, 'appint-ex-01', 'example-app-stage')).toContain('example-app-config-v2');
    expect(configMaps(w, 'appint-ex-k8s', 'example-app-edge')).toContain('example-app-config-v2');
  },
  allReconciled(w) {
    for (const [cluster, namespace] of CONFIG_MAP_HOMES) {
      expect(configMaps(w, cluster, namespace)).toEqual(['example-app-config-v2']);
    }
  },
  deletions: kubeDeletes,
  bigList: fillers((name) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'example-app-production' },
    data: {},
  })),
};

// ---------------------------------------------------------------- openshift-namespaces

const namespaces = (w: World, cluster: string) => objectNames(w.kube, cluster, 'v1', 'Namespace');

const openshiftNamespaces: Scenario = {
  integration: 'openshift-namespaces',
  service: 'kube',
  faulty: 'appint-ex-01',
  async setup(start) {
    const kube = await start.kube();
    // example-app-legacy is marked `delete: true` in app-interface.
    kube.server.seed('appint-ex-02', [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'example-app-legacy' } },
    ]);
    return kubeWorld(kube);
  },
  healthyReconciled(w) {
    expect(namespaces(w, 'appint-ex-02')).toContain('example-app-production');
    expect(namespaces(w, 'appint-ex-k8s')).toContain('example-app-edge');
  },
  allReconciled(w) {
    expect(namespaces(w, 'appint-ex-01')).toContain('example-app-stage');
    expect(namespaces(w, 'appint-ex-02')).toContain('example-app-production');
    // The server finishes a namespace's deletion a moment after the DELETE.
    expect(kubeDeletes(w).some((d) => d.endsWith('/example-app-legacy'))).toBe(true);
  },
  deletions: kubeDeletes,
};

// ---------------------------------------------------------------- openshift-rolebindings

const RBAC = 'rbac.authorization.k8s.io/v1';
/** A binding the example grants alice on each cluster (cluster, namespace, role). */
const BINDINGS = [
  ['appint-ex-01', 'example-app-stage', 'edit'],
  ['appint-ex-02', 'example-app-production', 'view'],
] as const;

const bindings = (w: World, cluster: string, namespace: string) =>
  objectNames(w.kube, cluster, RBAC, 'RoleBinding', namespace);

const openshiftRolebindings: Scenario = {
  integration: 'openshift-rolebindings',
  service: 'kube',
  faulty: 'appint-ex-02',
  async setup(start) {
    const kube = await start.kube({ namespaces: true });
    await converge(kube, 'openshift-rolebindings');
    // alice's cluster user is renamed: the next run binds the new name on
    // every cluster and deletes the bindings of the old one.
    await editFile(join(kube.appInterfaceDir, 'data/access/users/alice.yml'), (t) =>
      t.replace('github_username: alice-gh\n', 'github_username: alice-gh2\n'),
    );
    return kubeWorld(kube);
  },
  healthyReconciled(w) {
    const [cluster, namespace, role] = BINDINGS[0];
    expect(bindings(w, cluster, namespace)).toContain(`${role}-alice-gh2`);
  },
  allReconciled(w) {
    for (const [cluster, namespace, role] of BINDINGS) {
      expect(bindings(w, cluster, namespace)).toContain(`${role}-alice-gh2`);
      expect(bindings(w, cluster, namespace)).not.toContain(`${role}-alice-gh`);
    }
  },
  deletions: kubeDeletes,
  bigList: fillers((name) => ({
    apiVersion: RBAC,
    kind: 'RoleBinding',
    metadata: { name, namespace: 'example-app-production' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', name: 'nobody' }],
  })),
};

// ---------------------------------------------------------------- openshift-groups

const GROUP_API = 'user.openshift.io/v1';

function members(w: World, cluster: string, group: string): string[] {
  const obj = w.kube.server.get(cluster, GROUP_API, 'Group', '', group) as
    | { users?: string[] | null }
    | undefined;
  return [...(obj?.users ?? [])].sort();
}

const openshiftGroups: Scenario = {
  integration: 'openshift-groups',
  service: 'kube',
  faulty: 'appint-ex-02',
  async setup(start) {
    const kube = await start.kube();
    // mallory is in a group nobody grants her: the run removes her.
    kube.server.seed('appint-ex-01', [
      {
        apiVersion: GROUP_API,
        kind: 'Group',
        metadata: { name: 'example-app-viewers' },
        users: ['alice-gh', 'mallory-gh'],
      },
    ]);
    return kubeWorld(kube);
  },
  healthyReconciled(w) {
    expect(members(w, 'appint-ex-01', 'example-app-viewers')).toEqual(
      expect.arrayContaining(['bob-gh', 'dave-gh']),
    );
    expect(members(w, 'appint-ex-01', 'dedicated-admins')).toEqual(['alice-gh']);
  },
  allReconciled(w) {
    expect(members(w, 'appint-ex-01', 'example-app-viewers')).not.toContain('mallory-gh');
    expect(members(w, 'appint-ex-02', 'dedicated-admins')).toEqual(['alice-gh']);
  },
  deletions: (w) => [
    ...kubeDeletes(w),
    ...(members(w, 'appint-ex-01', 'example-app-viewers').includes('mallory-gh')
      ? []
      : ['appint-ex-01 removed mallory-gh from example-app-viewers']),
  ],
};

// ---------------------------------------------------------------- openshift-namespace-labels

function labels(w: World, cluster: string, namespace: string): Record<string, string> {
  const ns = w.kube.server.get(cluster, 'v1', 'Namespace', '', namespace) as
    | { metadata: { labels?: Record<string, string> } }
    | undefined;
  return ns?.metadata.labels ?? {};
}

const openshiftNamespaceLabels: Scenario = {
  integration: 'openshift-namespace-labels',
  service: 'kube',
  faulty: 'appint-ex-02',
  async setup(start) {
    return kubeWorld(await start.kube({ namespaces: true }));
  },
  healthyReconciled(w) {
    expect(labels(w, 'appint-ex-01', 'example-app-stage')).toMatchObject({ team: 'example' });
    expect(labels(w, 'appint-ex-k8s', 'example-app-edge')).toMatchObject({ tier: 'edge' });
  },
  allReconciled(w) {
    expect(labels(w, 'appint-ex-02', 'example-app-production')).toMatchObject({
      environment: 'production',
    });
  },
  // Labels are patched, never objects deleted: a delete request would be a bug.
  deletions: kubeDeletes,
};

// ---------------------------------------------------------------- github

const SECOND_ORG_TOKEN = 'ghp_second_org_token';

const github: Scenario = {
  integration: 'github',
  service: 'github',
  faulty: 'second-org',
  faultyPath: /\/orgs\/second-org\/|\/second-org\//,
  scopedRemovals: true,
  async setup(start) {
    const kube = await start.kube();
    const fake = await startExampleGitHub();
    fake.addOrg('second-org');
    fake.addToken(SECOND_ORG_TOKEN, { orgs: ['second-org'] });
    fake.addTeam('second-org', 'ops');
    fake.addTeamMember('second-org', 'ops', 'mallory-gh');
    await addSecondOrg(kube, SECOND_ORG_TOKEN);
    return {
      kube,
      github: fake,
      http: fake,
      env: githubEnv(fake),
      writes: () => fake.mutatingRequests().map((r) => `${r.method} ${r.path}`),
      resetLogs: () => kube.server.resetLog(),
    };
  },
  healthyReconciled(w) {
    const fake = w.github!;
    expect(teamState(fake, ORG, 'sre')).toEqual(DESIRED.sre);
    // mallory left app-sre-example: its removals do not wait for second-org.
    expect(teamState(fake, ORG, 'developers')).toEqual(DESIRED.developers);
  },
  allReconciled(w) {
    const fake = w.github!;
    expect(teamState(fake, ORG, 'developers')).toEqual(DESIRED.developers);
    expect(teamState(fake, 'second-org', 'ops')).toContain('alice-gh');
    expect(teamState(fake, 'second-org', 'ops')).not.toContain('mallory-gh');
  },
  deletions: (w) =>
    w
      .github!.mutatingRequests()
      .filter((r) => r.method === 'DELETE')
      .map((r) => `DELETE ${r.path}`),
};

// ---------------------------------------------------------------- gitlab

const DEVELOPER = 30;
const MAINTAINER = 40;
const REPORTER = 20;

function gitlabWorld(e: GitlabEnvironment): World {
  return {
    kube: e.env,
    gitlab: e.gitlab,
    http: e.gitlab,
    env: { PAGERDUTY_API_URL: e.pagerduty.url },
    writes: () => e.gitlab.mutatingRequests().map((r) => `${r.method} ${r.path}`),
    resetLogs: () => undefined,
  };
}

const gitlabDeletes = (w: World) =>
  w
    .gitlab!.mutatingRequests()
    .filter((r) => r.method === 'DELETE')
    .map((r) => `DELETE ${r.path}`);

const groupMembers = (w: World, group: string) =>
  w.gitlab!.groupMembers(group).map((m) => `${m.username}:${m.accessLevel}`);

const gitlabMembers: Scenario = {
  integration: 'gitlab-members',
  service: 'gitlab',
  faulty: 'example-tenants',
  scopedRemovals: true,
  async setup(start) {
    const e = await start.gitlab();
    const { gitlab } = e;
    gitlab.addGroup('app-sre-example', { name: 'App SRE Example' });
    const tenants = gitlab.addGroup('example-tenants');
    for (const user of ['alice', 'bob', 'carol', 'dave', 'example-ci', 'mallory']) {
      gitlab.addUser(user);
    }
    gitlab.addGroupMember('app-sre-example', 'alice', DEVELOPER);
    gitlab.addGroupMember('app-sre-example', 'mallory', DEVELOPER);
    gitlab.addGroupMember('example-tenants', 'bob', REPORTER);
    gitlab.addGroupMember('example-tenants', 'carol', REPORTER);
    // dave is on call in the example schedule (example-primary-oncall.yml).
    e.pagerduty.addUser({ id: 'PDAVE', email: 'dave@example.com' });
    e.pagerduty.addSchedule({ id: EXAMPLE_SCHEDULE, onCall: ['PDAVE'] });
    // Reads address the group by path, writes by id.
    return {
      ...gitlabWorld(e),
      faultyPath: new RegExp(`/groups/(example-tenants|${tenants.id})(/|$)`),
    };
  },
  healthyReconciled(w) {
    expect(groupMembers(w, 'app-sre-example')).toEqual(
      expect.arrayContaining([`alice:${MAINTAINER}`, `bob:${DEVELOPER}`, `dave:${MAINTAINER}`]),
    );
    // mallory left app-sre-example: its removals do not wait for example-tenants.
    expect(groupMembers(w, 'app-sre-example').some((m) => m.startsWith('mallory:'))).toBe(false);
  },
  allReconciled(w) {
    expect(groupMembers(w, 'app-sre-example').some((m) => m.startsWith('mallory:'))).toBe(false);
    expect(groupMembers(w, 'example-tenants')).toEqual(
      expect.arrayContaining([`alice:${REPORTER}`, `example-ci:${REPORTER}`]),
    );
  },
  deletions: gitlabDeletes,
};

const gitlabProjects: Scenario = {
  integration: 'gitlab-projects',
  service: 'gitlab',
  faulty: 'service',
  // Projects are created with `POST /projects` (the group is in the body).
  faultyPath: /\/projects/,
  async setup(start) {
    const e = await start.gitlab();
    e.gitlab.addGroup('service');
    return gitlabWorld(e);
  },
  // One group only: no healthy target besides the faulty one.
  healthyReconciled: () => undefined,
  allReconciled(w) {
    expect(w.gitlab!.projects('service').map((p) => p.name)).toEqual([
      'example-app',
      'example-saas-bundle',
    ]);
  },
  // gitlab-projects creates projects and never deletes one.
  deletions: gitlabDeletes,
};

export const SCENARIOS: readonly Scenario[] = [
  openshiftResources,
  openshiftNamespaces,
  openshiftRolebindings,
  openshiftGroups,
  openshiftNamespaceLabels,
  github,
  gitlabMembers,
  gitlabProjects,
];
