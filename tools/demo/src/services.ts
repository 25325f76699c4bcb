import type { FakeKubeApiServer } from '@qontract/fake-kube-apiserver';
import { seedExampleSaasRepos } from '@qontract/testing/example-saas';
import { type FakeGitHub, startFakeGitHub } from '@qontract/testing/fake-github';
import { type FakeGitlab, startFakeGitlab } from '@qontract/testing/fake-gitlab';
import { type FakePagerDuty, startFakePagerDuty } from '@qontract/testing/fake-pagerduty';
import { type FakeRegistry, startFakeRegistry } from '@qontract/testing/fake-registry';
import { startExampleClusters } from './demo.ts';

/**
 * The fixed ports of the simulated services, as `examples/` names them: the
 * GitLab instance's `url` (`data/dependencies/gitlab/gitlab.yml`) and the
 * tokens of `examples/config.toml`. GitHub and PagerDuty are found through
 * `GITHUB_API` / `PAGERDUTY_API_URL`, which the demo sets for its runs.
 */
const GITHUB_PORT = 16462;
const GITLAB_PORT = 16460;
const PAGERDUTY_PORT = 16461;
/** The example saas files' image registry (`127.0.0.1:16463/example/...`). */
const REGISTRY_PORT = 16463;
const GITHUB_TOKEN = 'ghp_example_token_not_real';
const GITLAB_TOKEN = 'glpat-example-token-not-real';
const PAGERDUTY_TOKEN = 'pd-example-token-not-real';

/** One simulated system the demo runs an integration against. */
interface DemoService {
  /** What `npm start` prints about it. */
  readonly lines: readonly string[];
  /** Environment of the runs (service URLs). */
  readonly env: Readonly<Record<string, string>>;
  /** Write requests it has received so far. */
  writes(): number;
  close(): Promise<void>;
}

export interface DemoServices {
  /** The simulated systems themselves (those started), for demos that play a part (Tekton, a merge). */
  readonly systems: {
    readonly clusters?: FakeKubeApiServer;
    readonly github?: FakeGitHub;
    readonly gitlab?: FakeGitlab;
    readonly registry?: FakeRegistry;
  };
  readonly lines: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  writes(): number;
  close(): Promise<void>;
}

/** Which simulated systems an integration talks to (the clusters for everything else). */
function systemsOf(
  integration: string,
): Array<'clusters' | 'github' | 'gitlab' | 'pagerduty' | 'registry'> {
  switch (integration) {
    case 'openshift-saas-deploy':
    case 'cd-chain':
      return ['clusters', 'github', 'gitlab', 'registry'];
    case 'github':
      return ['github'];
    case 'gitlab-members':
      return ['gitlab', 'pagerduty'];
    case 'gitlab-projects':
      return ['gitlab'];
    default:
      return ['clusters'];
  }
}

/**
 * Starts what the requested integrations need, each seeded with a current
 * state that differs from `examples/` so the runs have something to show.
 */
export async function startDemoServices(integrations: readonly string[]): Promise<DemoServices> {
  const wanted = new Set(integrations.flatMap(systemsOf));
  const started: DemoService[] = [];
  const systems: {
    clusters?: FakeKubeApiServer;
    github?: FakeGitHub;
    gitlab?: FakeGitlab;
    registry?: FakeRegistry;
  } = {};
  try {
    if (wanted.has('clusters')) {
      systems.clusters = await startExampleClusters();
      started.push(clustersService(systems.clusters));
    }
    const github = wanted.has('github') ? await startSeededGitHub() : undefined;
    if (github) {
      systems.github = github;
      started.push(githubService(github));
    }
    const gitlab = wanted.has('gitlab') ? await startSeededGitlab() : undefined;
    if (gitlab) {
      systems.gitlab = gitlab;
      started.push(gitlabService(gitlab));
    }
    if (wanted.has('pagerduty')) started.push(pagerDutyService(await startSeededPagerDuty()));
    if (wanted.has('registry') && github && gitlab) {
      const registry = await listening('registry', REGISTRY_PORT, () =>
        startFakeRegistry({ port: REGISTRY_PORT }),
      );
      systems.registry = registry;
      started.push(registryService(registry));
      // The repositories and images the example saas files deploy.
      await seedExampleSaasRepos({ github, gitlab, registry });
    }
  } catch (e) {
    await Promise.all(started.map((s) => s.close()));
    throw e;
  }
  return {
    systems,
    lines: started.flatMap((s) => s.lines),
    env: Object.assign({}, ...started.map((s) => s.env)) as Record<string, string>,
    writes: () => started.reduce((n, s) => n + s.writes(), 0),
    close: async () => {
      await Promise.all(started.map((s) => s.close()));
    },
  };
}

function clustersService(server: FakeKubeApiServer): DemoService {
  return {
    lines: [...server.clusters.values()].map(
      (c) =>
        `${c.name.padEnd(16)} ${c.url}  (${c.openshift ? 'OpenShift' : 'Kubernetes'} cluster, simulated)`,
    ),
    env: {},
    writes: () => server.mutatingRequests().length,
    close: () => server.close(),
  };
}

function githubService(github: FakeGitHub): DemoService {
  return {
    lines: [`${'GitHub'.padEnd(16)} ${github.url}  (REST API, simulated; GITHUB_API)`],
    env: { GITHUB_API: github.url },
    writes: () => github.mutatingRequests().length,
    close: () => github.close(),
  };
}

function gitlabService(gitlab: FakeGitlab): DemoService {
  return {
    lines: [
      `${'GitLab'.padEnd(16)} ${gitlab.url}  (REST API v4, simulated, self-signed certificate)`,
    ],
    env: {},
    writes: () => gitlab.mutatingRequests().length,
    close: () => gitlab.close(),
  };
}

function registryService(registry: FakeRegistry): DemoService {
  return {
    lines: [
      `${'Registry'.padEnd(16)} ${registry.url}  (Docker Registry HTTP API v2 as Quay serves it, simulated)`,
    ],
    env: {},
    writes: () => registry.mutatingRequests().length,
    close: () => registry.close(),
  };
}

function pagerDutyService(pagerduty: FakePagerDuty): DemoService {
  return {
    lines: [
      `${'PagerDuty'.padEnd(16)} ${pagerduty.url}  (REST API v2, simulated; PAGERDUTY_API_URL)`,
    ],
    env: { PAGERDUTY_API_URL: pagerduty.url },
    writes: () => pagerduty.mutatingRequests().length,
    close: () => pagerduty.close(),
  };
}

async function listening<T>(what: string, port: number, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (e) {
    throw new Error(`cannot start the simulated ${what} on port ${port}: ${(e as Error).message}`);
  }
}

/**
 * The example organisation as it might be before app-interface manages it:
 * a managed team missing, a member who should not be there.
 */
async function startSeededGitHub(): Promise<FakeGitHub> {
  const github = await listening('GitHub', GITHUB_PORT, () =>
    startFakeGitHub({ token: GITHUB_TOKEN, port: GITHUB_PORT }),
  );
  github.addOrg('app-sre-example');
  for (const login of [
    'alice-gh',
    'bob-gh',
    'carol-gh',
    'dave-gh',
    'example-ci-bot',
    'mallory-gh',
  ]) {
    github.addUser(login);
  }
  // `developers` is missing (create_team); mallory-gh is in no role any more.
  github.addTeam('app-sre-example', 'sre');
  github.addTeamMember('app-sre-example', 'sre', 'alice-gh');
  github.addTeamMember('app-sre-example', 'sre', 'mallory-gh');
  return github;
}

/**
 * The example groups: alice one level too low, carol no longer in any role,
 * the `service` group without the requested projects.
 */
async function startSeededGitlab(): Promise<FakeGitlab> {
  const gitlab = await listening('GitLab', GITLAB_PORT, () =>
    startFakeGitlab({ token: GITLAB_TOKEN, port: GITLAB_PORT, tls: true }),
  );
  for (const user of ['alice', 'bob', 'carol', 'dave', 'example-ci']) gitlab.addUser(user);
  gitlab.addGroup('app-sre-example');
  gitlab.addGroup('example-tenants');
  gitlab.addGroup('service');
  gitlab.addGroupMember('app-sre-example', 'alice', 30);
  gitlab.addGroupMember('app-sre-example', 'carol', 30);
  gitlab.addGroupMember('example-tenants', 'bob', 20);
  return gitlab;
}

/** dave is on call in the example schedule (`scheduleID: PEXMPL1`). */
async function startSeededPagerDuty(): Promise<FakePagerDuty> {
  const pagerduty = await listening('PagerDuty', PAGERDUTY_PORT, () =>
    startFakePagerDuty({ token: PAGERDUTY_TOKEN, port: PAGERDUTY_PORT }),
  );
  pagerduty.addUser({ id: 'PDAVE01', email: 'dave@example.com', name: 'Dave Example' });
  pagerduty.addSchedule({ id: 'PEXMPL1', name: 'Example primary', onCall: ['PDAVE01'] });
  return pagerduty;
}
