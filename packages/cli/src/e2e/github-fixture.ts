import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type ExampleEnvironment, type FakeGitHub, startFakeGitHub } from '@qontract/testing';
import { afterEach } from 'vitest';
import { editFile } from './harness.ts';

/** The example config's token of app-sre-example (`[github.app-sre-example] token`). */
export const EXAMPLE_TOKEN = 'ghp_example_token_not_real';
export const ORG = 'app-sre-example';

/** What the example app-interface asks for (roles github-sre/github-developers + cluster auth). */
export const DESIRED = {
  sre: ['alice-gh', 'carol-gh', 'example-ci-bot'],
  developers: ['alice-gh', 'bob-gh', 'dave-gh'],
};

const fakes: FakeGitHub[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

/**
 * A fake GitHub (closed when the test ends) holding app-sre-example as a
 * run finds it before the first reconcile: `developers` exists with bob, a
 * stale member (mallory) and dave's pending invitation; `sre` does not
 * exist; `outsiders` is an unmanaged team whose member must stay untouched.
 */
export async function startExampleGitHub(): Promise<FakeGitHub> {
  const fake = await startFakeGitHub({ token: EXAMPLE_TOKEN });
  fakes.push(fake);
  fake.addOrg(ORG);
  for (const login of [
    'alice-gh',
    'bob-gh',
    'carol-gh',
    'dave-gh',
    'example-ci-bot',
    'mallory-gh',
    'oscar-gh',
  ]) {
    fake.addUser(login);
  }
  fake.addTeam(ORG, 'developers');
  fake.addTeamMember(ORG, 'developers', 'bob-gh');
  fake.addTeamMember(ORG, 'developers', 'mallory-gh');
  fake.addInvitation(ORG, 'dave-gh', { teams: ['developers'] });
  fake.addTeam(ORG, 'outsiders');
  fake.addTeamMember(ORG, 'outsiders', 'oscar-gh');
  return fake;
}

/** The environment of a CLI run against the fake: its URL, and waits shrunk for tests. */
export function githubEnv(fake: FakeGitHub, extra: Record<string, string> = {}) {
  return {
    GITHUB_API: fake.url,
    QONTRACT_GITHUB_WRITE_INTERVAL_MS: '0',
    QONTRACT_GITHUB_RETRY_UNIT_MS: '20',
    ...extra,
  };
}

/** Members and pending invitations of a team: who the integration counts as in it. */
export function teamState(fake: FakeGitHub, org: string, team: string): string[] {
  const slug = fake.teams(org).find((t) => t.name === team)?.slug;
  const invited = fake
    .invitations(org)
    .filter((i) => slug !== undefined && i.teams.includes(slug))
    .map((i) => i.login);
  return [...fake.teamMembers(org, team), ...invited].sort();
}

async function addDataFile(env: ExampleEnvironment, path: string, lines: string[]) {
  const file = join(env.appInterfaceDir, 'data', path);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${lines.join('\n')}\n`);
}

/**
 * A second organisation in the environment's app-interface copy and config:
 * `second-org` with managed team `ops`, granted to alice by a new role, read
 * with `token` (a token the fake does not know makes it fail).
 */
export async function addSecondOrg(env: ExampleEnvironment, token: string): Promise<void> {
  await addDataFile(env, 'dependencies/github/second-org.yml', [
    '---',
    '$schema: /dependencies/github-org-1.yml',
    'labels: {}',
    'name: second-org',
    'description: A second organisation.',
    'url: https://github.com/second-org',
    'two_factor_authentication: true',
    'managedTeams: [ops]',
    'token: { path: github/second-org, field: token }',
  ]);
  await addDataFile(env, 'dependencies/github/permissions/second-org-ops.yml', [
    '---',
    '$schema: /access/permission-1.yml',
    'labels: {}',
    'name: github-second-org-ops',
    'description: The ops team of second-org.',
    'service: github-org-team',
    'org: second-org',
    'team: ops',
  ]);
  await addDataFile(env, 'access/roles/github-second-org-ops.yml', [
    '---',
    '$schema: /access/role-1.yml',
    'labels: {}',
    'name: github-second-org-ops',
    'description: The ops team of second-org.',
    'permissions:',
    '  - $ref: /dependencies/github/permissions/second-org-ops.yml',
  ]);
  await editFile(
    join(env.appInterfaceDir, 'data/access/users/alice.yml'),
    (text) => `${text.trimEnd()}\n  - $ref: /access/roles/github-second-org-ops.yml\n`,
  );
  await appendFile(env.configPath, `\n[github.second-org]\ntoken = "${token}"\n`);
}
