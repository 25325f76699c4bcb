import { describe, expect, it } from 'vitest';
import { describeProjectAction, planGroupProjects, projectActionCounts } from './plan.ts';

const SERVER = 'https://gitlab.example.com';
const projectUrl = (group: string, project: string) => `${SERVER}/${group}/${project}`;
const component = (project: string, resource = 'upstream') => ({
  url: `${SERVER}/service/${project}`,
  resource,
});

describe('planGroupProjects', () => {
  it.each([
    {
      title: 'nothing requested',
      requested: [],
      existing: [],
      components: [],
      actions: [],
      problems: [],
    },
    {
      title: 'an existing project is left alone (by name)',
      requested: ['api'],
      existing: ['api', 'unrequested'],
      components: [component('api')],
      actions: [],
      problems: [],
    },
    {
      title: 'a missing project of a code component is created',
      requested: ['api'],
      existing: [],
      components: [component('api')],
      actions: [{ group: 'service', project: 'api', url: `${SERVER}/service/api`, bundle: false }],
      problems: [],
    },
    {
      title: 'a bundle code component is also initiated',
      requested: ['saas-bundle'],
      existing: [],
      components: [component('saas-bundle', 'bundle')],
      actions: [
        {
          group: 'service',
          project: 'saas-bundle',
          url: `${SERVER}/service/saas-bundle`,
          bundle: true,
        },
      ],
      problems: [],
    },
    {
      title: 'a project whose URL is no code component is a problem, the others go on',
      requested: ['stray', 'api'],
      existing: [],
      components: [component('api'), { url: `${SERVER}/other/stray`, resource: 'upstream' }],
      actions: [{ group: 'service', project: 'api', url: `${SERVER}/service/api`, bundle: false }],
      problems: [
        {
          group: 'service',
          project: 'stray',
          message: `${SERVER}/service/stray missing from all codeComponents`,
        },
      ],
    },
    {
      title: 'a project requested twice is created once',
      requested: ['api', 'api'],
      existing: [],
      components: [component('api')],
      actions: [{ group: 'service', project: 'api', url: `${SERVER}/service/api`, bundle: false }],
      problems: [],
    },
  ])('$title', ({ requested, existing, components, actions, problems }) => {
    expect(
      planGroupProjects({
        group: 'service',
        requested,
        existing: new Set(existing),
        codeComponents: components,
        projectUrl,
      }),
    ).toEqual({ actions, problems });
  });
});

describe('describeProjectAction', () => {
  it('logs the creation, and the bundle set-up after it', () => {
    const action = { group: 'service', project: 'b', url: `${SERVER}/service/b`, bundle: true };
    expect(describeProjectAction(action)).toEqual([
      "['create_project', 'service', 'b']",
      "['initiate_saas_bundle_repo', 'service', 'b']",
    ]);
    expect(projectActionCounts(action)).toEqual(['create_project', 'initiate_saas_bundle_repo']);
    expect(describeProjectAction({ ...action, bundle: false })).toEqual([
      "['create_project', 'service', 'b']",
    ]);
    expect(projectActionCounts({ ...action, bundle: false })).toEqual(['create_project']);
  });
});
