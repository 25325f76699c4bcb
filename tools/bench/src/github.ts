import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '@qontract/fake-kube-apiserver';
import { type FakeGitHub, startFakeGitHub } from '@qontract/testing/fake-github';
import { stringify as stringifyToml } from 'smol-toml';
import { stringify } from 'yaml';
import {
  type InFlightSummary,
  inFlightSummary,
  type MeasureOptions,
  measureInChild,
} from './measure.ts';
import { REPO_ROOT, writeTreeFiles } from './tree.ts';

const EXAMPLES = join(REPO_ROOT, 'examples/app-interface');

/** Organisations × managed teams per organisation × members per team, over a pool of users. */
export interface GithubScale {
  readonly orgs: number;
  readonly teams: number;
  readonly members: number;
  /** Distinct users; each is in `orgs × teams × members / users` teams. */
  readonly users: number;
}

export const GITHUB_LARGE_SCALE: GithubScale = { orgs: 50, teams: 20, members: 100, users: 2000 };
export const GITHUB_SMALL_SCALE: GithubScale = { orgs: 2, teams: 3, members: 5, users: 10 };

/** The `github` integration against the fake GitHub. */
export interface GithubScenario {
  readonly kind: 'github';
  readonly scale: GithubScale;
  /** Fraction of team memberships missing on GitHub. */
  readonly drift: number;
  readonly dryRun: boolean;
  readonly latencyMs: number;
  readonly concurrency: number;
}

export const githubScaleLabel = (s: GithubScale) =>
  `${s.orgs} orgs × ${s.teams} teams × ${s.members} members`;

export function githubScenarioName(s: GithubScenario): string {
  const state = s.drift === 0 ? 'steady' : `drift ${Math.round(s.drift * 1000) / 10}%`;
  return `github ${state} ${s.dryRun ? 'dry-run' : 'wet'} @${s.latencyMs}ms`;
}

const orgName = (o: number) => `bench-org-${String(o).padStart(3, '0')}`;
const teamName = (t: number) => `team-${String(t).padStart(3, '0')}`;
const login = (u: number) => `bench-user-${String(u).padStart(5, '0')}`;
const tokenOf = (o: number) => `ghp_bench_token_${o}`;

/** The members of team `t` of org `o`: a window of the user pool, so every user is in one team per org. */
function membersOf(scale: GithubScale, o: number, t: number): number[] {
  const k = o * scale.teams + t;
  return Array.from({ length: scale.members }, (_, j) => (k * scale.members + j) % scale.users);
}

/**
 * Writes the app-interface tree of a scale: one file per organisation (its
 * managed teams), one permission and one role per team, one user file per
 * user naming the roles of the teams it is in; the example schemas, settings
 * (`vault: false`) and the integration file. The config gives each
 * organisation its own token.
 */
async function writeGithubTree(dir: string, scale: GithubScale): Promise<number> {
  await cp(join(EXAMPLES, 'graphql-schemas'), join(dir, 'graphql-schemas'), { recursive: true });
  await cp(join(EXAMPLES, 'schemas'), join(dir, 'schemas'), { recursive: true });
  await cp(join(EXAMPLES, 'data/app-interface'), join(dir, 'data/app-interface'), {
    recursive: true,
  });
  await cp(
    join(EXAMPLES, 'data/app-sre/integrations/github.yml'),
    join(dir, 'data/app-sre/integrations/github.yml'),
  );
  const files: Array<[string, string]> = [];
  const data = (path: string, doc: Record<string, unknown>) =>
    files.push([join(dir, 'data', path), `---\n${stringify(doc, { lineWidth: 0 })}`]);
  const rolesOfUser = new Map<number, string[]>();
  for (let o = 0; o < scale.orgs; o++) {
    data(`dependencies/github/${orgName(o)}.yml`, {
      $schema: '/dependencies/github-org-1.yml',
      labels: {},
      name: orgName(o),
      description: 'A benchmark organisation.',
      url: `https://github.com/${orgName(o)}`,
      two_factor_authentication: true,
      default: o === 0,
      managedTeams: Array.from({ length: scale.teams }, (_, t) => teamName(t)),
      token: { path: `github/${orgName(o)}`, field: 'token' },
    });
    for (let t = 0; t < scale.teams; t++) {
      const id = `${orgName(o)}-${teamName(t)}`;
      data(`dependencies/github/permissions/${id}.yml`, {
        $schema: '/access/permission-1.yml',
        labels: {},
        name: id,
        description: 'A benchmark team.',
        service: 'github-org-team',
        org: orgName(o),
        team: teamName(t),
      });
      data(`access/roles/${id}.yml`, {
        $schema: '/access/role-1.yml',
        labels: {},
        name: id,
        description: 'Members of a benchmark team.',
        permissions: [{ $ref: `/dependencies/github/permissions/${id}.yml` }],
      });
      for (const u of membersOf(scale, o, t)) {
        const roles = rolesOfUser.get(u) ?? [];
        roles.push(`/access/roles/${id}.yml`);
        rolesOfUser.set(u, roles);
      }
    }
  }
  for (let u = 0; u < scale.users; u++) {
    data(`access/users/${login(u)}.yml`, {
      $schema: '/access/user-1.yml',
      labels: {},
      name: login(u),
      org_username: login(u),
      github_username: login(u),
      roles: (rolesOfUser.get(u) ?? []).map(($ref) => ({ $ref })),
    });
  }
  await writeTreeFiles(files);
  return files.length;
}

function configToml(dir: string, scale: GithubScale): string {
  const github: Record<string, { token: string }> = {};
  for (let o = 0; o < scale.orgs; o++) github[orgName(o)] = { token: tokenOf(o) };
  return stringifyToml({ graphql: { server: `file://${dir}` }, github });
}

/**
 * GitHub as the last run left it: every desired membership, less the
 * drifted ones (chosen by a seeded generator, the same on every run). The
 * writes a wet run needs: add_to_team per missing membership, add_to_org per
 * user missing from every managed team of an organisation it belongs in.
 */
function seed(
  github: FakeGitHub,
  scale: GithubScale,
  drift: number,
): { drifted: number; writes: number } {
  const random = seededRandom(20_261_125);
  for (let u = 0; u < scale.users; u++) github.addUser(login(u));
  let drifted = 0;
  let writes = 0;
  for (let o = 0; o < scale.orgs; o++) {
    github.addOrg(orgName(o));
    github.addToken(tokenOf(o), { orgs: [orgName(o)] });
    const desired = new Set<number>();
    const present = new Set<number>();
    for (let t = 0; t < scale.teams; t++) {
      github.addTeam(orgName(o), teamName(t));
      for (const u of membersOf(scale, o, t)) {
        desired.add(u);
        if (drift > 0 && random() < drift) {
          drifted++;
          continue;
        }
        present.add(u);
        github.addTeamMember(orgName(o), teamName(t), login(u));
      }
    }
    writes += [...desired].filter((u) => !present.has(u)).length;
  }
  return { drifted, writes: writes + drifted };
}

/** What a github scenario measured. */
export interface GithubResult {
  readonly kind: 'github';
  readonly scale: GithubScale;
  readonly drift: number;
  readonly dryRun: boolean;
  readonly latencyMs: number;
  readonly concurrency: number;
  readonly files: number;
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly peakRssBytes: number;
  readonly exitCode: number;
  /** Requests GitHub answered: reads (GET) and writes. */
  readonly reads: number;
  readonly writes: number;
  /** Memberships missing on GitHub (add_to_team each, add_to_org for a user then in no team of the org). */
  readonly drifted: number;
  readonly expectedWrites: number;
  /** How concurrent the run's requests to GitHub were (the pool allows `concurrency`). */
  readonly inFlight: InFlightSummary;
  /** One members list per team (pages of 100) and one write per change. */
  readonly lowerBound: { readonly reads: number; readonly writes: number; readonly ms: number };
  readonly ratio: number | null;
}

/**
 * One measured run of `github` (a fresh child process, as the CLI runs it)
 * against a fake GitHub seeded with `scale` and `drift`, with `latencyMs`
 * added to every request. GitHub's advised one-second spacing of writes is
 * switched off (`QONTRACT_GITHUB_WRITE_INTERVAL_MS=0`): the scenario measures
 * our round trips, not that courtesy delay.
 */
export async function runGithubScenario(
  s: GithubScenario,
  measure: MeasureOptions = {},
): Promise<GithubResult> {
  const dir = await mkdtemp(join(tmpdir(), 'qr-bench-github-'));
  const github = await startFakeGitHub({
    token: 'ghp_bench_unused',
    // Far more than one run needs: the scenario measures round trips, not the quota.
    rateLimit: { limit: 1_000_000 },
  });
  try {
    const files = await writeGithubTree(join(dir, 'app-interface'), s.scale);
    const configPath = join(dir, 'config.toml');
    await writeFile(configPath, configToml(join(dir, 'app-interface'), s.scale));
    const { drifted, writes: driftWrites } = seed(github, s.scale, s.drift);
    github.latencyMs = s.latencyMs;
    github.inFlight.reset();
    const m = await measureInChild(
      {
        kind: 'integration',
        integration: 'github',
        configPath,
        dryRun: s.dryRun,
        threadPoolSize: s.concurrency,
        env: { GITHUB_API: github.url, QONTRACT_GITHUB_WRITE_INTERVAL_MS: '0' },
      },
      measure,
    );
    const writes = github.mutatingRequests().length;
    const reads = github.requestLog.length - writes;
    const expectedWrites = s.dryRun ? 0 : driftWrites;
    const boundReads = s.scale.orgs * s.scale.teams * Math.max(1, Math.ceil(s.scale.members / 100));
    const boundMs = ((boundReads + expectedWrites) / Math.max(1, s.concurrency)) * s.latencyMs;
    return {
      kind: 'github',
      scale: s.scale,
      drift: s.drift,
      dryRun: s.dryRun,
      latencyMs: s.latencyMs,
      concurrency: s.concurrency,
      files,
      wallMs: m.wallMs,
      cpuMs: m.cpuMs,
      peakRssBytes: m.peakRssBytes,
      exitCode: m.exitCode,
      reads,
      writes,
      drifted,
      expectedWrites,
      inFlight: inFlightSummary(github.inFlight),
      lowerBound: { reads: boundReads, writes: expectedWrites, ms: boundMs },
      ratio: boundMs > 0 ? m.wallMs / boundMs : null,
    };
  } finally {
    await github.close();
    await rm(dir, { recursive: true, force: true });
  }
}
