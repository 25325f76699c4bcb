import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { buildBundleFromDirectory } from './read-directory.ts';
import { removeTree, writeTree } from './test-support/tree.ts';
import { validateBundle } from './validate.ts';

/*
 * One broken data file per class of schema violation: each must read as the
 * one (or few) real mistakes, not as every alternative ajv tried.
 */

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map(removeTree));
});
afterEach(() => {
  vi.restoreAllMocks();
});

const COMMON = JSON.stringify({
  $schema: 'http://json-schema.org/draft-06/schema',
  definitions: {
    crossref: {
      type: 'object',
      additionalProperties: false,
      properties: { $ref: { type: 'string' } },
      required: ['$ref'],
    },
    resourceref: { type: 'string', pattern: '^/' },
  },
});

/** An entry picked by `provider`, kept in its own schema file as upstream's openshift-resource-1. */
const RESOURCE_SCHEMA = `
$schema: /metaschema-1.json
type: object
properties:
  provider: { type: string }
oneOf:
- additionalProperties: false
  properties:
    provider: { type: string, enum: [resource] }
    path: { $ref: /common-1.json#/definitions/resourceref }
  required: [provider, path]
- additionalProperties: false
  properties:
    provider: { type: string, enum: [vault-secret] }
    path: { type: string }
    version: { type: integer }
  required: [provider, path, version]
- additionalProperties: false
  properties:
    provider: { type: string, enum: [prometheus-rule] }
    path: { $ref: /common-1.json#/definitions/resourceref }
    type: { type: string, enum: [resource, resource-template-extracurlyjinja2] }
  required: [provider, path, type]
- additionalProperties: false
  properties:
    provider: { type: string, enum: [route] }
    path: { $ref: /common-1.json#/definitions/resourceref }
    tls:
      oneOf:
      - { type: object, additionalProperties: false, properties: { vault: { type: string } }, required: [vault] }
      - { type: object, additionalProperties: false, properties: { inline: { type: string } }, required: [inline] }
  required: [provider, path]
`;

const NS_SCHEMA = `
$schema: /metaschema-1.json
type: object
additionalProperties: false
properties:
  $schema: { type: string, enum: [/ns-1.yml] }
  name: { type: string }
  homepage: { type: string, format: uri }
  owner: { type: string, format: email }
  resources: { type: array, items: { $ref: /resource-1.yml } }
  # no discriminator: the branches differ in shape only
  contact:
    oneOf:
    - type: object
      additionalProperties: false
      properties: { email: { type: string }, name: { type: string } }
      required: [email, name]
    - type: object
      additionalProperties: false
      properties: { slack: { type: object, properties: { channel: { type: string } }, required: [channel] } }
      required: [slack]
  limits:
    type: object
    properties: { cpu: { type: string }, memory: { type: string } }
    anyOf: [{ required: [cpu] }, { required: [memory] }]
  size:
    oneOf: [{ type: integer }, { type: number }]
  # as upstream's integration-1 \`schemas\`
  tags:
    type: array
    items: { type: string }
    allOf: [{ contains: { const: base } }, { contains: { const: extra } }]
required: [$schema, name]
`;

async function problemsOf(data: string, extra: Record<string, string> = {}): Promise<string[]> {
  const root = await writeTree({
    'graphql-schemas/schema.yml': 'confs: []\n',
    'schemas/common-1.json': COMMON,
    'schemas/resource-1.yml': RESOURCE_SCHEMA,
    'schemas/ns-1.yml': NS_SCHEMA,
    'data/ns.yml': `$schema: /ns-1.yml\nname: ns\n${data}`,
    ...extra,
  });
  roots.push(root);
  const bundle = await buildBundleFromDirectory(root, { git: false });
  return validateBundle(bundle).map((p) => `${p.file}: ${p.reason}`);
}

describe('schema violations, one class per case', () => {
  it.each([
    {
      what: 'a oneOf entry picked by its discriminator: only the picked branch speaks',
      data: 'resources:\n- { provider: prometheus-rule, path: /rules.yml }\n',
      want: [
        `/ns.yml: schema /ns-1.yml: /resources/0 is missing required property 'type' (provider: "prometheus-rule")`,
      ],
    },
    {
      what: 'a wrong value inside the picked branch (not taken for the discriminator)',
      data: 'resources:\n- { provider: prometheus-rule, path: /rules.yml, type: jinja }\n',
      want: [
        `/ns.yml: schema /ns-1.yml: /resources/0/type must be one of ["resource","resource-template-extracurlyjinja2"] (provider: "prometheus-rule")`,
      ],
    },
    {
      what: 'an unknown discriminator value: the closest branch',
      data: 'resources:\n- { provider: resources, path: /a.yml }\n',
      want: [
        `/ns.yml: schema /ns-1.yml: /resources/0/provider must be one of ["resource"] (closest of 4 alternatives)`,
      ],
    },
    {
      what: 'a oneOf inside a picked branch: both choices named, outermost first',
      data: 'resources:\n- { provider: route, path: /r.yml, tls: { vault: 1 } }\n',
      want: [
        '/ns.yml: schema /ns-1.yml: /resources/0/tls/vault must be string (provider: "route", closest of 2 alternatives)',
      ],
    },
    {
      what: 'a oneOf without discriminator: the branch that got deepest',
      data: 'contact: { slack: { name: x } }\n',
      want: [
        `/ns.yml: schema /ns-1.yml: /contact/slack is missing required property 'channel' (closest of 2 alternatives)`,
      ],
    },
    {
      what: 'an anyOf: one alternative, not both',
      data: 'limits: { pids: 3 }\n',
      want: [
        `/ns.yml: schema /ns-1.yml: /limits is missing required property 'cpu' (closest of 2 alternatives)`,
      ],
    },
    {
      what: 'a oneOf that matches more than one branch says so',
      data: 'size: 3\n',
      want: [
        '/ns.yml: schema /ns-1.yml: /size matches more than one alternative (0, 1) of its oneOf',
      ],
    },
    {
      what: 'a missing list item: what is missing, not why each item is not it',
      data: 'tags: [a, extra, b]\n',
      want: ['/ns.yml: schema /ns-1.yml: /tags must contain "base"'],
    },
    {
      what: 'independent mistakes: each once, the deepest first',
      data: 'colour: red\nresources:\n- { provider: resource, path: relative.yml }\n',
      want: [
        '/ns.yml: schema /ns-1.yml: /resources/0/path must match pattern "^/" (provider: "resource")',
        "/ns.yml: schema /ns-1.yml: (root) has unexpected property 'colour'",
      ],
    },
    {
      what: 'formats are documentation, as in qontract-validator',
      data: 'homepage: not a uri\nowner: nobody\n',
      want: [],
    },
  ])('$what', async ({ data, want }) => {
    const warn = vi.spyOn(console, 'warn');
    const log = vi.spyOn(console, 'log');
    expect(await problemsOf(data)).toEqual(want);
    // no "unknown format ... ignored" noise
    expect(warn).not.toHaveBeenCalled();
    expect(log).not.toHaveBeenCalled();
  });

  it('checks schema.yml against the schema it names, as qontract-validator does', async () => {
    const problems = await problemsOf('', {
      'graphql-schemas/schema.yml':
        '$schema: /graphql-1.yml\nconfs:\n- { name: Query, fields: [], colour: red }\n',
      'schemas/graphql-1.yml': `
$schema: /metaschema-1.json
type: object
properties:
  $schema: { type: string }
  confs:
    type: array
    items:
      type: object
      additionalProperties: false
      properties: { name: { type: string }, fields: { type: array } }
      required: [name, fields]
`,
    });
    expect(problems).toEqual([
      "graphql-schemas/schema.yml: schema /graphql-1.yml: /confs/0 has unexpected property 'colour'",
    ]);
  });
});
