import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from './fake-slack.ts';

/**
 * Every method the fake Slack serves answers a body that matches the 200 schema
 * of Slack's own published description of the Web API (an unchanged excerpt of
 * slackapi/slack-api-specs kept beside this file: see its `$comment`).
 */
interface Excerpt {
  readonly methods: Record<string, object>;
  readonly definitions: Record<string, object>;
}
const excerpt = JSON.parse(
  readFileSync(new URL('./slack-web-api.schema.json', import.meta.url), 'utf8'),
) as Excerpt;
// The description is Swagger 2.0 (draft-04 schemas); the parts used here read the
// same under Ajv's default draft, `$ref`s resolved against `definitions`. One idiom
// differs: Slack writes alternatives as `items: [A, B]` on a schema that is not an
// array (`objs_user`, `objs_conversation`, a nullable `bot_id`); read as draft-04, that
// checks nothing, so it is read as the `anyOf` it means.
const asAnyOf = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(asAnyOf);
  if (node === null || typeof node !== 'object') return node;
  const entries = Object.entries(node).map(([k, v]) => [k, asAnyOf(v)] as const);
  const schema: Record<string, unknown> = Object.fromEntries(entries);
  if (Array.isArray(schema.items) && schema.type !== 'array') {
    const { items, ...rest } = schema;
    return { ...rest, anyOf: items };
  }
  return schema;
};
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ $id: 'slack', definitions: asAnyOf(excerpt.definitions) });
const rewrite = (schema: object) =>
  asAnyOf(JSON.parse(JSON.stringify(schema).replaceAll('"#/definitions/', '"slack#/definitions/')));

let slack: FakeSlack;
beforeAll(async () => {
  slack = await startFakeSlack({
    users: [
      { id: 'U0ALICE01', name: 'alice', email: 'alice@example.com' },
      { id: 'U0BOB0001', name: 'bob', deleted: true },
    ],
    channels: [
      { id: 'C0DEPLOYS1', name: 'deploys' },
      { id: 'G0SECRET01', name: 'secret', isPrivate: true, isArchived: true },
    ],
    usergroups: [
      { id: 'S0TEAM001', handle: 'team', users: ['U0ALICE01'], channels: ['C0DEPLOYS1'] },
    ],
  });
});
afterAll(() => slack.close());

async function call(method: string, params: Record<string, string>): Promise<unknown> {
  const res = await fetch(`${slack.apiUrl}${method}`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${slack.token}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(params).toString(),
  });
  expect(res.status).toBe(200);
  return res.json();
}

const CALLS: ReadonlyArray<readonly [string, Record<string, string>]> = [
  ['chat.postMessage', { channel: 'C0DEPLOYS1', text: 'hello' }],
  ['users.list', { limit: '1' }],
  ['conversations.list', { types: 'public_channel,private_channel' }],
  ['usergroups.list', { include_users: 'true', include_count: 'true', include_disabled: 'true' }],
  ['usergroups.create', { name: 'New group', handle: 'new-group', channels: 'C0DEPLOYS1' }],
  ['usergroups.update', { usergroup: 'S0TEAM001', description: 'the team' }],
  ['usergroups.users.list', { usergroup: 'S0TEAM001' }],
  ['usergroups.users.update', { usergroup: 'S0TEAM001', users: 'U0ALICE01,U0BOB0001' }],
];

describe("fake Slack against Slack's published Web API description", () => {
  it('covers every method of the excerpt', () => {
    expect(CALLS.map(([m]) => m).sort()).toEqual(Object.keys(excerpt.methods).sort());
  });

  it.each(CALLS)('%s answers a body its 200 schema accepts', async (method, params) => {
    const body = await call(method, params);
    expect(body).toMatchObject({ ok: true });
    const validate = ajv.compile(rewrite(excerpt.methods[method] ?? {}) as object);
    expect(validate(body) ? [] : validate.errors).toEqual([]);
  });
});
