/**
 * The organisations, users, teams and invitations of the fake GitHub, with
 * GitHub's membership rules, and the JSON shapes GitHub answers them in.
 * Logins and team names compare case-insensitively, as on GitHub; the
 * answers keep the spelling they were created with.
 */

import { type FakeGitCommit, FakeGitRepository } from './fake-git.ts';

export type OrgRole = 'admin' | 'member';
export type TeamRole = 'member' | 'maintainer';
export type TeamPrivacy = 'secret' | 'closed';
/** What an organisation invitation grants (`direct_member` is a plain member). */
export type InvitationRole = 'admin' | 'direct_member' | 'billing_manager';

export interface FakeGitHubUser {
  readonly login: string;
  readonly id: number;
  readonly name: string | null;
  readonly email: string | null;
}

export interface FakeGitHubOrg {
  readonly login: string;
  readonly id: number;
  readonly name: string | null;
}

export interface FakeGitHubTeam {
  readonly id: number;
  readonly name: string;
  readonly slug: string;
  readonly description: string | null;
  readonly privacy: TeamPrivacy;
  readonly permission: string;
}

/** A repository of the fake GitHub. */
export interface FakeGitHubRepo {
  readonly id: number;
  readonly owner: string;
  readonly name: string;
  /** `owner/name` */
  readonly fullName: string;
  /** Only tokens with access to the owner see it (GitHub answers 404 to the others). */
  readonly private: boolean;
}

/** A pending organisation invitation, as the readers show it. */
export interface FakeGitHubInvitation {
  readonly id: number;
  readonly login: string;
  readonly role: InvitationRole;
  /** Slugs of the teams the user joins on accepting. */
  readonly teams: readonly string[];
}

interface TeamState {
  readonly team: FakeGitHubTeam;
  readonly createdAt: string;
  /** lower-case login → role; insertion order is the listing order. */
  readonly members: Map<string, TeamRole>;
}

interface InvitationState {
  readonly id: number;
  readonly login: string;
  readonly role: InvitationRole;
  readonly teamIds: Set<number>;
  readonly inviter: string;
  readonly createdAt: string;
}

interface OrgState {
  readonly org: FakeGitHubOrg;
  readonly createdAt: string;
  readonly members: Map<string, OrgRole>;
  /** slug → team */
  readonly teams: Map<string, TeamState>;
  /** lower-case login → invitation */
  readonly invitations: Map<string, InvitationState>;
}

/** A repository with its git history. */
export interface RepoState extends FakeGitHubRepo {
  readonly createdAt: string;
  readonly git: FakeGitRepository;
}

/** GitHub's placeholder account; the inviter when a token acts for no user. */
const GHOST = 'ghost';

/** GitHub's team slug: lower case, runs of other characters than `a-z0-9_-` become one `-`. */
function teamSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

const key = (login: string) => login.toLowerCase();

/** A failed lookup; the router answers it with GitHub's 404 body. */
export class NotFound extends Error {}

export class GitHubModel {
  readonly #users = new Map<string, FakeGitHubUser>();
  readonly #orgs = new Map<string, OrgState>();
  readonly #orgsById = new Map<number, OrgState>();
  readonly #teamsById = new Map<number, { org: OrgState; team: TeamState }>();
  /** lower-case `owner/name` → repository */
  readonly #repos = new Map<string, RepoState>();
  #nextId = 1;
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
    this.addUser(GHOST, { id: 10137 });
  }

  #timestamp(): string {
    return `${new Date(this.#now()).toISOString().slice(0, 19)}Z`;
  }

  #id(): number {
    return this.#nextId++;
  }

  addUser(login: string, fields: { id?: number; name?: string; email?: string } = {}) {
    const existing = this.#users.get(key(login));
    if (existing) return existing;
    const user: FakeGitHubUser = {
      login,
      id: fields.id ?? this.#id(),
      name: fields.name ?? null,
      email: fields.email ?? null,
    };
    this.#users.set(key(login), user);
    return user;
  }

  user(login: string): FakeGitHubUser | undefined {
    return this.#users.get(key(login));
  }

  addOrg(login: string, fields: { id?: number; name?: string } = {}): FakeGitHubOrg {
    const existing = this.#orgs.get(key(login));
    if (existing) return existing.org;
    const org: FakeGitHubOrg = { login, id: fields.id ?? this.#id(), name: fields.name ?? null };
    const state: OrgState = {
      org,
      createdAt: this.#timestamp(),
      members: new Map(),
      teams: new Map(),
      invitations: new Map(),
    };
    this.#orgs.set(key(login), state);
    this.#orgsById.set(org.id, state);
    return org;
  }

  org(login: string): OrgState {
    const org = this.#orgs.get(key(login));
    if (!org) throw new NotFound(`no organisation ${login}`);
    return org;
  }

  orgById(id: number): OrgState {
    const org = this.#orgsById.get(id);
    if (!org) throw new NotFound(`no organisation with id ${id}`);
    return org;
  }

  /** A repository (idempotent: an existing one is returned as it is). */
  addRepo(owner: string, name: string, fields: { private?: boolean } = {}): RepoState {
    const fullName = `${owner}/${name}`;
    const existing = this.#repos.get(key(fullName));
    if (existing) return existing;
    const repo: RepoState = {
      id: this.#id(),
      owner,
      name,
      fullName,
      private: fields.private ?? false,
      createdAt: this.#timestamp(),
      git: new FakeGitRepository(this.#now),
    };
    this.#repos.set(key(fullName), repo);
    return repo;
  }

  /** The repository `owner/name`, or NotFound. */
  repo(fullName: string): RepoState {
    const repo = this.#repos.get(key(fullName));
    if (!repo) throw new NotFound(`no repository ${fullName}`);
    return repo;
  }

  /** The repositories `login` owns, in the order they were created. */
  reposOwnedBy(login: string): RepoState[] {
    return [...this.#repos.values()].filter((r) => key(r.owner) === key(login));
  }

  hasOrg(login: string): boolean {
    return this.#orgs.has(key(login));
  }

  /** The user, or NotFound (GitHub's 404 for an unknown login). */
  existingUser(login: string): FakeGitHubUser {
    const user = this.user(login);
    if (!user) throw new NotFound(`no user ${login}`);
    return user;
  }

  /** Makes `login` a member (or admin) of the organisation; a pending invitation lapses. */
  addOrgMember(orgLogin: string, login: string, role: OrgRole = 'member'): void {
    const org = this.org(orgLogin);
    const user = this.addUser(login);
    org.members.set(key(user.login), role);
    org.invitations.delete(key(user.login));
  }

  /** Removes the user from the organisation and from all its teams. */
  removeOrgMember(orgLogin: string, login: string): boolean {
    const org = this.org(orgLogin);
    const k = key(login);
    for (const team of org.teams.values()) team.members.delete(k);
    return org.members.delete(k);
  }

  addTeam(
    orgLogin: string,
    name: string,
    fields: { description?: string; privacy?: TeamPrivacy; permission?: string } = {},
  ): FakeGitHubTeam {
    const org = this.org(orgLogin);
    const existing = this.findTeam(org, name);
    if (existing) return existing.team;
    const team: FakeGitHubTeam = {
      id: this.#id(),
      name,
      slug: teamSlug(name),
      description: fields.description ?? null,
      privacy: fields.privacy ?? 'secret',
      permission: fields.permission ?? 'pull',
    };
    const state: TeamState = { team, createdAt: this.#timestamp(), members: new Map() };
    org.teams.set(team.slug, state);
    this.#teamsById.set(team.id, { org, team: state });
    return team;
  }

  /** The team whose name or slug is `nameOrSlug`, case-insensitively. */
  findTeam(org: OrgState, nameOrSlug: string): TeamState | undefined {
    const bySlug = org.teams.get(nameOrSlug.toLowerCase());
    if (bySlug) return bySlug;
    const wanted = nameOrSlug.toLowerCase();
    for (const team of org.teams.values()) {
      if (team.team.name.toLowerCase() === wanted || team.team.slug === teamSlug(wanted)) {
        return team;
      }
    }
    return undefined;
  }

  team(orgLogin: string, nameOrSlug: string): TeamState {
    const team = this.findTeam(this.org(orgLogin), nameOrSlug);
    if (!team) throw new NotFound(`no team ${nameOrSlug} in ${orgLogin}`);
    return team;
  }

  teamById(orgId: number, teamId: number): TeamState {
    const found = this.#teamsById.get(teamId);
    if (!found || found.org.org.id !== orgId) throw new NotFound(`no team ${teamId}`);
    return found.team;
  }

  /** Seeds a team membership; a user outside the organisation joins it as a member first. */
  addTeamMember(orgLogin: string, team: string, login: string, role: TeamRole = 'member'): void {
    const org = this.org(orgLogin);
    const user = this.addUser(login);
    if (!org.members.has(key(user.login))) this.addOrgMember(orgLogin, user.login);
    this.team(orgLogin, team).members.set(key(user.login), role);
  }

  /**
   * GitHub's `PUT .../teams/{team}/memberships/{user}`: an organisation member
   * joins the team at once; anyone else gets (or extends) a pending
   * organisation invitation naming the team.
   */
  setTeamMembership(
    orgLogin: string,
    slug: string,
    login: string,
    role: TeamRole,
    inviter: string | undefined,
  ): 'active' | 'pending' {
    const org = this.org(orgLogin);
    const team = this.team(orgLogin, slug);
    const user = this.existingUser(login);
    const k = key(user.login);
    if (org.members.has(k)) {
      team.members.set(k, role);
      return 'active';
    }
    const invitation = this.invite(orgLogin, user.login, 'direct_member', inviter);
    invitation.teamIds.add(team.team.id);
    return 'pending';
  }

  /** Removes a team membership, or the team from the user's pending invitation. */
  removeTeamMembership(orgLogin: string, slug: string, login: string): void {
    const org = this.org(orgLogin);
    const team = this.team(orgLogin, slug);
    const user = this.existingUser(login);
    team.members.delete(key(user.login));
    org.invitations.get(key(user.login))?.teamIds.delete(team.team.id);
  }

  /** A pending organisation invitation for `login` (the existing one when there is one). */
  invite(
    orgLogin: string,
    login: string,
    role: InvitationRole = 'direct_member',
    inviter: string | undefined = undefined,
    teams: readonly string[] = [],
  ): InvitationState {
    const org = this.org(orgLogin);
    const user = this.addUser(login);
    let invitation = org.invitations.get(key(user.login));
    if (!invitation) {
      invitation = {
        id: this.#id(),
        login: user.login,
        role,
        teamIds: new Set(),
        inviter: inviter ?? GHOST,
        createdAt: this.#timestamp(),
      };
      org.invitations.set(key(user.login), invitation);
    }
    for (const team of teams) invitation.teamIds.add(this.team(orgLogin, team).team.id);
    return invitation;
  }

  /** The invited user accepts: organisation member, and member of the invitation's teams. */
  acceptInvitation(orgLogin: string, login: string): void {
    const org = this.org(orgLogin);
    const invitation = org.invitations.get(key(login));
    if (!invitation) throw new NotFound(`no invitation of ${login} to ${orgLogin}`);
    this.addOrgMember(orgLogin, login, invitation.role === 'admin' ? 'admin' : 'member');
    for (const id of invitation.teamIds) {
      this.#teamsById.get(id)?.team.members.set(key(login), 'member');
    }
  }

  /** GitHub's `DELETE /orgs/{org}/memberships/{user}`: removes a member, or cancels an invitation. */
  removeOrgMembership(orgLogin: string, login: string): boolean {
    const org = this.org(orgLogin);
    const k = key(login);
    const wasMember = this.removeOrgMember(orgLogin, login);
    const wasInvited = org.invitations.delete(k);
    return wasMember || wasInvited;
  }

  teamsOf(org: OrgState): TeamState[] {
    return [...org.teams.values()].sort((a, b) =>
      a.team.name.toLowerCase().localeCompare(b.team.name.toLowerCase()),
    );
  }

  /** Users in listing order (GitHub lists members by account id). */
  usersOf(members: Map<string, string>, role?: string): FakeGitHubUser[] {
    const out: FakeGitHubUser[] = [];
    for (const [login, r] of members) {
      if (role !== undefined && r !== role) continue;
      const user = this.#users.get(login);
      if (user) out.push(user);
    }
    return out.sort((a, b) => a.id - b.id);
  }

  invitationsOf(org: OrgState, teamId?: number): InvitationState[] {
    return [...org.invitations.values()].filter(
      (i) => teamId === undefined || i.teamIds.has(teamId),
    );
  }

  /** The teams a pending invitation adds the user to. */
  invitationTeams(invitation: InvitationState): TeamState[] {
    return [...invitation.teamIds]
      .map((id) => this.#teamsById.get(id)?.team)
      .filter((t): t is TeamState => t !== undefined);
  }

  teamSlugs(invitation: InvitationState): string[] {
    return [...invitation.teamIds]
      .map((id) => this.#teamsById.get(id)?.team.team.slug)
      .filter((s): s is string => s !== undefined);
  }

  userLogin(lowerLogin: string): string {
    return this.#users.get(lowerLogin)?.login ?? lowerLogin;
  }
}

/** The JSON GitHub answers, with URLs under the fake's base URL. */
export class GitHubShapes {
  readonly #api: string;
  readonly #model: GitHubModel;

  constructor(api: string, model: GitHubModel) {
    this.#api = api;
    this.#model = model;
  }

  simpleUser(user: FakeGitHubUser) {
    const url = `${this.#api}/users/${user.login}`;
    return {
      login: user.login,
      id: user.id,
      node_id: nodeId('04:User', user.id),
      avatar_url: `https://avatars.githubusercontent.com/u/${user.id}?v=4`,
      gravatar_id: '',
      url,
      html_url: `https://github.com/${user.login}`,
      followers_url: `${url}/followers`,
      following_url: `${url}/following{/other_user}`,
      gists_url: `${url}/gists{/gist_id}`,
      starred_url: `${url}/starred{/owner}{/repo}`,
      subscriptions_url: `${url}/subscriptions`,
      organizations_url: `${url}/orgs`,
      repos_url: `${url}/repos`,
      events_url: `${url}/events{/privacy}`,
      received_events_url: `${url}/received_events`,
      type: 'User',
      user_view_type: 'public',
      site_admin: false,
    };
  }

  publicUser(user: FakeGitHubUser) {
    return {
      ...this.simpleUser(user),
      name: user.name,
      company: null,
      blog: '',
      location: null,
      email: user.email,
      hireable: null,
      bio: null,
      twitter_username: null,
      public_repos: 0,
      public_gists: 0,
      followers: 0,
      following: 0,
      created_at: '2015-01-01T00:00:00Z',
      updated_at: '2015-01-01T00:00:00Z',
    };
  }

  /** `GET /users/{login}`: a user, or an organisation seen as an account (GitHub answers both). */
  account(login: string) {
    const user = this.#model.user(login);
    if (user) return this.publicUser(user);
    if (!this.#model.hasOrg(login)) throw new NotFound(`no account ${login}`);
    const org = this.#model.org(login).org;
    return {
      ...this.publicUser({ login: org.login, id: org.id, name: org.name, email: null }),
      node_id: nodeId('012:Organization', org.id),
      type: 'Organization',
    };
  }

  orgSimple(org: FakeGitHubOrg) {
    const url = `${this.#api}/orgs/${org.login}`;
    return {
      login: org.login,
      id: org.id,
      node_id: nodeId('012:Organization', org.id),
      url,
      repos_url: `${url}/repos`,
      events_url: `${url}/events`,
      hooks_url: `${url}/hooks`,
      issues_url: `${url}/issues`,
      members_url: `${url}/members{/member}`,
      public_members_url: `${url}/public_members{/member}`,
      avatar_url: `https://avatars.githubusercontent.com/u/${org.id}?v=4`,
      description: null,
    };
  }

  orgFull(state: { org: FakeGitHubOrg; createdAt: string }) {
    return {
      ...this.orgSimple(state.org),
      name: state.org.name,
      blog: '',
      twitter_username: null,
      is_verified: false,
      has_organization_projects: true,
      has_repository_projects: true,
      public_repos: 0,
      public_gists: 0,
      followers: 0,
      following: 0,
      html_url: `https://github.com/${state.org.login}`,
      type: 'Organization',
      created_at: state.createdAt,
      updated_at: state.createdAt,
      archived_at: null,
    };
  }

  team(org: FakeGitHubOrg, state: { team: FakeGitHubTeam }) {
    const t = state.team;
    const url = `${this.#api}/organizations/${org.id}/team/${t.id}`;
    return {
      id: t.id,
      node_id: nodeId('04:Team', t.id),
      url,
      html_url: `https://github.com/orgs/${org.login}/teams/${t.slug}`,
      name: t.name,
      slug: t.slug,
      description: t.description,
      privacy: t.privacy,
      notification_setting: 'notifications_enabled',
      permission: t.permission,
      members_url: `${url}/members{/member}`,
      repositories_url: `${url}/repos`,
      type: 'organization',
      organization_id: org.id,
      parent: null,
    };
  }

  teamFull(org: { org: FakeGitHubOrg; createdAt: string }, state: TeamStateView) {
    return {
      ...this.team(org.org, state),
      members_count: state.members.size,
      repos_count: 0,
      created_at: state.createdAt,
      updated_at: state.createdAt,
      organization: this.orgFull(org),
    };
  }

  invitation(org: FakeGitHubOrg, invitation: InvitationStateView) {
    const inviter = this.#model.user(invitation.inviter);
    return {
      id: invitation.id,
      node_id: nodeId('022:OrganizationInvitation', invitation.id),
      login: invitation.login,
      email: null,
      role: invitation.role,
      created_at: invitation.createdAt,
      failed_at: null,
      failed_reason: null,
      inviter: inviter ? this.simpleUser(inviter) : null,
      team_count: invitation.teamIds.size,
      invitation_teams_url: `${this.#api}/organizations/${org.id}/invitations/${invitation.id}/teams`,
      invitation_source: 'member',
    };
  }

  teamMembership(
    org: FakeGitHubOrg,
    team: FakeGitHubTeam,
    login: string,
    role: TeamRole,
    state: string,
  ) {
    return {
      url: `${this.#api}/organizations/${org.id}/team/${team.id}/memberships/${login}`,
      role,
      state,
    };
  }

  /** A repository's owner: the organisation when one has the login, else a user. */
  repoOwner(login: string) {
    if (this.#model.hasOrg(login)) {
      const org = this.#model.org(login).org;
      return {
        ...this.simpleUser({ login: org.login, id: org.id, name: null, email: null }),
        node_id: nodeId('012:Organization', org.id),
        type: 'Organization',
      };
    }
    return this.simpleUser(this.#model.addUser(login));
  }

  /** GitHub's full repository (`GET /repos/{owner}/{repo}`). */
  repository(
    repo: FakeGitHubRepo & { readonly createdAt: string; readonly defaultBranch: string },
  ) {
    const url = `${this.#api}/repos/${repo.fullName}`;
    const html = `https://github.com/${repo.fullName}`;
    return {
      id: repo.id,
      node_id: nodeId('010:Repository', repo.id),
      name: repo.name,
      full_name: repo.fullName,
      owner: this.repoOwner(repo.owner),
      private: repo.private,
      html_url: html,
      description: null,
      fork: false,
      url,
      archive_url: `${url}/{archive_format}{/ref}`,
      assignees_url: `${url}/assignees{/user}`,
      blobs_url: `${url}/git/blobs{/sha}`,
      branches_url: `${url}/branches{/branch}`,
      collaborators_url: `${url}/collaborators{/collaborator}`,
      comments_url: `${url}/comments{/number}`,
      commits_url: `${url}/commits{/sha}`,
      compare_url: `${url}/compare/{base}...{head}`,
      contents_url: `${url}/contents/{+path}`,
      contributors_url: `${url}/contributors`,
      deployments_url: `${url}/deployments`,
      downloads_url: `${url}/downloads`,
      events_url: `${url}/events`,
      forks_url: `${url}/forks`,
      git_commits_url: `${url}/git/commits{/sha}`,
      git_refs_url: `${url}/git/refs{/sha}`,
      git_tags_url: `${url}/git/tags{/sha}`,
      git_url: `git://github.com/${repo.fullName}.git`,
      issue_comment_url: `${url}/issues/comments{/number}`,
      issue_events_url: `${url}/issues/events{/number}`,
      issues_url: `${url}/issues{/number}`,
      keys_url: `${url}/keys{/key_id}`,
      labels_url: `${url}/labels{/name}`,
      languages_url: `${url}/languages`,
      merges_url: `${url}/merges`,
      milestones_url: `${url}/milestones{/number}`,
      notifications_url: `${url}/notifications{?since,all,participating}`,
      pulls_url: `${url}/pulls{/number}`,
      releases_url: `${url}/releases{/id}`,
      ssh_url: `git@github.com:${repo.fullName}.git`,
      stargazers_url: `${url}/stargazers`,
      statuses_url: `${url}/statuses/{sha}`,
      subscribers_url: `${url}/subscribers`,
      subscription_url: `${url}/subscription`,
      tags_url: `${url}/tags`,
      teams_url: `${url}/teams`,
      trees_url: `${url}/git/trees{/sha}`,
      clone_url: `${html}.git`,
      mirror_url: null,
      hooks_url: `${url}/hooks`,
      svn_url: html,
      homepage: null,
      language: null,
      forks_count: 0,
      stargazers_count: 0,
      watchers_count: 0,
      size: 0,
      default_branch: repo.defaultBranch,
      open_issues_count: 0,
      is_template: false,
      topics: [],
      has_issues: true,
      has_projects: true,
      has_wiki: true,
      has_pages: false,
      has_downloads: true,
      has_discussions: false,
      archived: false,
      disabled: false,
      visibility: repo.private ? 'private' : 'public',
      pushed_at: repo.createdAt,
      created_at: repo.createdAt,
      updated_at: repo.createdAt,
      permissions: { admin: false, maintain: false, push: false, triage: false, pull: true },
      subscribers_count: 0,
      network_count: 0,
      license: null,
      forks: 0,
      open_issues: 0,
      watchers: 0,
    };
  }

  /** A commit as the REST commit API answers it (`GET /repos/{owner}/{repo}/commits[/{ref}]`). */
  commit(fullName: string, commit: FakeGitCommit) {
    const repoUrl = `${this.#api}/repos/${fullName}`;
    const signature = { name: 'Fake Git', email: 'fake@example.com', date: commit.date };
    return {
      sha: commit.sha,
      node_id: nodeId('06:Commit', commit.sha),
      url: `${repoUrl}/commits/${commit.sha}`,
      html_url: `https://github.com/${fullName}/commit/${commit.sha}`,
      comments_url: `${repoUrl}/commits/${commit.sha}/comments`,
      commit: {
        url: `${repoUrl}/git/commits/${commit.sha}`,
        author: signature,
        committer: signature,
        message: commit.message,
        comment_count: 0,
        tree: { sha: commit.treeSha, url: `${repoUrl}/git/trees/${commit.treeSha}` },
      },
      author: null,
      committer: null,
      parents: commit.parents.map((sha) => ({
        sha,
        url: `${repoUrl}/commits/${sha}`,
        html_url: `https://github.com/${fullName}/commit/${sha}`,
      })),
    };
  }

  /** The git object of a commit (`GET /repos/{owner}/{repo}/git/commits/{sha}`). */
  gitCommit(fullName: string, commit: FakeGitCommit) {
    const repoUrl = `${this.#api}/repos/${fullName}`;
    const signature = { name: 'Fake Git', email: 'fake@example.com', date: commit.date };
    return {
      sha: commit.sha,
      node_id: nodeId('06:Commit', commit.sha),
      url: `${repoUrl}/git/commits/${commit.sha}`,
      html_url: `https://github.com/${fullName}/commit/${commit.sha}`,
      author: signature,
      committer: signature,
      message: commit.message,
      tree: { sha: commit.treeSha, url: `${repoUrl}/git/trees/${commit.treeSha}` },
      parents: commit.parents.map((sha) => ({
        sha,
        url: `${repoUrl}/git/commits/${sha}`,
        html_url: `https://github.com/${fullName}/commit/${sha}`,
      })),
      verification: {
        verified: false,
        reason: 'unsigned',
        signature: null,
        payload: null,
        verified_at: null,
      },
    };
  }

  branch(fullName: string, name: string, sha: string) {
    return {
      name,
      commit: { sha, url: `${this.#api}/repos/${fullName}/commits/${sha}` },
      protected: false,
    };
  }

  tag(fullName: string, name: string, sha: string) {
    const repoUrl = `${this.#api}/repos/${fullName}`;
    return {
      name,
      zipball_url: `${repoUrl}/zipball/refs/tags/${name}`,
      tarball_url: `${repoUrl}/tarball/refs/tags/${name}`,
      commit: { sha, url: `${repoUrl}/commits/${sha}` },
      node_id: Buffer.from(`03:Ref${fullName}:refs/tags/${name}`).toString('base64'),
    };
  }

  orgMembership(org: FakeGitHubOrg, user: FakeGitHubUser, role: OrgRole, state: string) {
    return {
      url: `${this.#api}/orgs/${org.login}/memberships/${user.login}`,
      state,
      role,
      organization_url: `${this.#api}/orgs/${org.login}`,
      organization: this.orgSimple(org),
      user: this.simpleUser(user),
      permissions: { can_create_repository: true },
    };
  }
}

type TeamStateView = {
  readonly team: FakeGitHubTeam;
  readonly createdAt: string;
  readonly members: ReadonlyMap<string, TeamRole>;
};
type InvitationStateView = {
  readonly id: number;
  readonly login: string;
  readonly role: InvitationRole;
  readonly teamIds: ReadonlySet<number>;
  readonly inviter: string;
  readonly createdAt: string;
};

/** GitHub's legacy global node id: base64 of `<type>:<id>`. */
function nodeId(prefix: string, id: number | string): string {
  return Buffer.from(`${prefix}${id}`).toString('base64');
}
