import { silentLogger } from '@qontract/core';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { GqlBackendError, GqlQueryError } from './errors.ts';
import { createRemoteTransport, type RemoteTransportOptions } from './remote-transport.ts';
import {
  type StubHandler,
  sendJson,
  sendText,
  startStubServer,
} from './test-support/stub-server.ts';

const SHA = 'ab'.repeat(32);
const TOKEN = 'Basic c2VjcmV0LXVzZXI6c2VjcmV0LXBhc3N3b3Jk';
const QUERY = '{ settings: app_interface_settings_v1 { vault } }';

/** qontract-server's happy path: a bundle sha, its commit, and one answer. */
const happy: StubHandler = (req, res) => {
  if (req.method === 'GET' && req.url === '/sha256') return sendText(res, 200, `${SHA}\n`);
  if (req.url === `/git-commit-info/${SHA}`) {
    return sendJson(res, 200, { commit: 'c0ffee', timestamp: '1606295532' });
  }
  return sendJson(res, 200, {
    data: { settings: [{ vault: false }] },
    extensions: { schemas: ['/app-interface/app-interface-settings-1.yml'] },
  });
};

const stub = await startStubServer(happy);
afterAll(() => stub.close());

beforeEach(() => {
  stub.requests.length = 0;
  stub.handler = happy;
});

const waits: number[] = [];
function transport(overrides: Partial<RemoteTransportOptions> = {}) {
  waits.length = 0;
  return createRemoteTransport({
    server: `${stub.origin}/graphql`,
    token: TOKEN,
    pinToCurrentBundle: true,
    log: silentLogger(),
    retry: { attempts: 5, delayMs: 1000 },
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...overrides,
  });
}

function posts(): number {
  return stub.requests.filter((r) => r.method === 'POST').length;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a failure');
}

describe('remote transport', () => {
  it('pins the run to the bundle /sha256 names and sends the token verbatim everywhere', async () => {
    const t = await transport();
    const response = await t.execute(QUERY, undefined, 'Settings');
    expect(response.data).toEqual({ settings: [{ vault: false }] });
    expect(response.extensions?.schemas).toEqual(['/app-interface/app-interface-settings-1.yml']);
    expect(t.sha).toBe(SHA);
    expect(t.endpoint).toBe(`${stub.origin}/graphqlsha/${SHA}`);
    expect(t.gitCommit).toEqual({ commit: 'c0ffee', timestamp: '1606295532' });
    expect(stub.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /sha256',
      `GET /git-commit-info/${SHA}`,
      `POST /graphqlsha/${SHA}`,
    ]);
    expect(stub.requests.every((r) => r.authorization === TOKEN)).toBe(true);
    expect(JSON.parse(stub.requests[2]!.body)).toMatchObject({ query: QUERY });
  });

  it('queries the configured URL as is with --no-gql-sha-url', async () => {
    const t = await transport({ pinToCurrentBundle: false });
    await t.execute(QUERY, { a: 1 }, 'Settings');
    expect(t.sha).toBeUndefined();
    expect(t.gitCommit).toBeNull();
    expect(stub.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /graphql']);
    expect(JSON.parse(stub.requests[0]!.body).variables).toEqual({ a: 1 });
  });

  it('pins to a given sha without asking /sha256 (comparison bundles)', async () => {
    const other = 'cd'.repeat(32);
    const t = await transport({ sha: other });
    expect(t.endpoint).toBe(`${stub.origin}/graphqlsha/${other}`);
    expect(stub.requests.some((r) => r.url === '/sha256')).toBe(false);
  });

  it('sends no Authorization header without a token', async () => {
    const t = await transport({ token: undefined });
    await t.execute(QUERY, undefined, 'Settings');
    expect(stub.requests.every((r) => r.authorization === undefined)).toBe(true);
  });

  it('retries 5xx answers with a linear back-off and then succeeds', async () => {
    const t = await transport();
    let failures = 2;
    stub.handler = (req, res) => {
      if (req.method === 'POST' && failures-- > 0) return sendText(res, 502, 'bad gateway');
      return happy(req, res);
    };
    const response = await t.execute(QUERY, undefined, 'Settings');
    expect(response.data).toEqual({ settings: [{ vault: false }] });
    expect(waits).toEqual([1000, 2000]);
  });

  it('gives up after five attempts and names the query, never the token', async () => {
    const t = await transport();
    stub.handler = (req, res) =>
      req.method === 'POST' ? sendText(res, 503, TOKEN) : happy(req, res);
    const before = stub.requests.length;
    const e = await failure(t.execute(QUERY, undefined, 'NamespacesMinimal'));
    expect(e).toBeInstanceOf(GqlQueryError);
    expect(e.message).toBe(
      `GraphQL query NamespacesMinimal failed: HTTP 503 (text/plain) from ${stub.origin}/graphqlsha/${SHA}: "***" (gave up after 5 attempts)`,
    );
    expect(e.message).not.toContain(TOKEN);
    expect(stub.requests.length - before).toBe(5);
    expect(waits).toEqual([1000, 2000, 3000, 4000]);
  });

  it('does not retry a response with errors (it will not change) and reports the first error', async () => {
    const t = await transport();
    stub.handler = (req, res) =>
      req.method === 'POST'
        ? sendJson(res, 200, {
            data: null,
            errors: [
              {
                message: 'Cannot return null for non-nullable field Cluster_v1.name.',
                path: ['clusters', 0, 'name'],
              },
              { message: 'second' },
            ],
            extensions: { schemas: [] },
          })
        : happy(req, res);
    const e = await failure(t.execute(QUERY, undefined, 'Clusters'));
    expect(e.message).toBe(
      `GraphQL query Clusters failed: \`errors\` returned with the response from ${stub.origin}/graphqlsha/${SHA}: ` +
        'Cannot return null for non-nullable field Cluster_v1.name. (at clusters.0.name) and 1 more error(s)',
    );
    expect(posts()).toBe(1);
    expect(waits).toEqual([]);
  });

  it('reports an HTML page answered with 200 as such, once, not as a connection problem', async () => {
    const t = await transport();
    stub.handler = (req, res) => {
      if (req.method !== 'POST') return happy(req, res);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!DOCTYPE html>\n<html><head><title>Log in</title></head>\n<body><p>Please   log in to continue.</p>` +
          `<script>var t = "${req.authorization}";</script>${'<p>filler</p>'.repeat(100)}</body></html>`,
      );
    };
    const e = await failure(t.execute(QUERY, undefined, 'Settings'));
    expect(e).toBeInstanceOf(GqlQueryError);
    expect(e.message).not.toContain('could not connect');
    expect(e.message).toMatch(
      new RegExp(
        `^GraphQL query Settings failed: ${escapeRegExp(`${stub.origin}/graphqlsha/${SHA}`)} answered HTTP 200 ` +
          `\\(text/html; charset=utf-8\\), not a GraphQL response: "Log in Please log in to continue\\. `,
      ),
    );
    expect(e.message).not.toContain(TOKEN);
    expect(e.message).not.toContain(TOKEN.slice('Basic '.length));
    expect(e.message.length).toBeLessThan(400);
    expect(posts()).toBe(1);
    expect(waits).toEqual([]);
  });

  it('reports a truncated JSON body, once', async () => {
    const t = await transport();
    stub.handler = (req, res) => {
      if (req.method !== 'POST') return happy(req, res);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data": {"settings": [{"vault": fa');
    };
    const e = await failure(t.execute(QUERY, undefined, 'Settings'));
    expect(e.message).toBe(
      `GraphQL query Settings failed: ${stub.origin}/graphqlsha/${SHA} answered HTTP 200 (application/json) ` +
        'with invalid JSON (Unexpected end of JSON input): "{"data": {"settings": [{"vault": fa"',
    );
    expect(posts()).toBe(1);
  });

  it('reports a JSON answer that is not a GraphQL response, once', async () => {
    const t = await transport();
    stub.handler = (req, res) =>
      req.method === 'POST' ? sendJson(res, 200, { status: 'ok' }) : happy(req, res);
    const e = await failure(t.execute(QUERY, undefined, 'Settings'));
    expect(e.message).toBe(
      `GraphQL query Settings failed: ${stub.origin}/graphqlsha/${SHA} answered HTTP 200 (application/json) ` +
        'without `data` or `errors`: "{"status":"ok"}"',
    );
    expect(posts()).toBe(1);
  });

  it('retries an answer whose connection is cut mid-body (it may come whole next time)', async () => {
    const t = await transport({ retry: { attempts: 3, delayMs: 1 } });
    stub.handler = (req, res) => {
      if (req.method !== 'POST') return happy(req, res);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"data": {"sett');
      setTimeout(() => res.socket?.destroy(), 10);
      return 'hang';
    };
    const e = await failure(t.execute(QUERY, undefined, 'Settings'));
    expect(e.message).toMatch(
      new RegExp(
        `^GraphQL query Settings failed: the answer from ${escapeRegExp(`${stub.origin}/graphqlsha/${SHA}`)} ` +
          '\\(HTTP 200\\) was cut off: .+ \\(gave up after 3 attempts\\)$',
      ),
    );
    expect(posts()).toBe(3);
  });

  it('reads an answer that arrives in pieces split inside characters, a byte order mark first', async () => {
    const t = await transport();
    const value = 'é€😀 ünïcödé';
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(JSON.stringify({ data: { settings: [{ vault: false, name: value }] } })),
    ]);
    // Cut points inside the BOM and inside the two-, three- and four-byte characters.
    const start = bytes.indexOf(Buffer.from('é'));
    const cuts = [0, 2, start + 1, start + 3, start + 6, start + 9, bytes.length];
    stub.handler = (req, res) => {
      if (req.method !== 'POST') return happy(req, res);
      res.writeHead(200, { 'content-type': 'application/json' });
      const send = (i: number): void => {
        if (i + 1 >= cuts.length) return void res.end();
        res.write(bytes.subarray(cuts[i], cuts[i + 1]));
        setTimeout(() => send(i + 1), 5);
      };
      send(0);
      return 'hang';
    };
    const result = await t.execute(QUERY, undefined, 'Settings');
    expect(result.data).toEqual({ settings: [{ vault: false, name: value }] });
  });
  it('does not retry a 401 from a proxy, says what came back and never shows the token', async () => {
    const t = await transport();
    stub.handler = (req, res) =>
      req.method === 'POST'
        ? sendText(res, 401, `invalid credentials: ${req.authorization}`)
        : happy(req, res);
    const e = await failure(t.execute(QUERY, undefined, 'Settings'));
    expect(e.message).toBe(
      `GraphQL query Settings failed: HTTP 401 (text/plain) from ${stub.origin}/graphqlsha/${SHA}: ` +
        '"invalid credentials: ***"',
    );
    expect(posts()).toBe(1);
  });

  it('retries a 429 after the time its Retry-After asks for', async () => {
    const t = await transport();
    let throttled = 1;
    stub.handler = (req, res) => {
      if (req.method === 'POST' && throttled-- > 0) {
        res.writeHead(429, { 'retry-after': '7', 'content-type': 'text/plain' });
        return res.end('slow down');
      }
      return happy(req, res);
    };
    const response = await t.execute(QUERY, undefined, 'Settings');
    expect(response.data).toEqual({ settings: [{ vault: false }] });
    expect(posts()).toBe(2);
    expect(waits).toEqual([7000]);
  });

  it('does not retry a 400 (a query the server cannot parse or validate)', async () => {
    const t = await transport();
    stub.handler = (req, res) =>
      req.method === 'POST'
        ? sendJson(res, 400, {
            errors: [{ message: 'Cannot query field "nope" on type "Query".' }],
          })
        : happy(req, res);
    const e = await failure(t.execute('{ nope }', undefined, 'Nope'));
    expect(e.message).toBe(
      `GraphQL query Nope failed: HTTP 400 from ${stub.origin}/graphqlsha/${SHA}: Cannot query field "nope" on type "Query".`,
    );
    expect(waits).toEqual([]);
  });

  it('times out a request that gets no answer', async () => {
    const t = await transport({ queryTimeoutMs: 50, retry: { attempts: 2, delayMs: 1 } });
    stub.handler = (req, res) => (req.method === 'POST' ? 'hang' : happy(req, res));
    const e = await failure(t.execute(QUERY, undefined, 'Settings'));
    expect(e.message).toBe(
      `GraphQL query Settings failed: no response from ${stub.origin}/graphqlsha/${SHA} within 0.05s (gave up after 2 attempts)`,
    );
    expect(waits).toEqual([1]);
  });

  it("stops at once when the run's signal is aborted: no retry, no waiting out the time-out", async () => {
    const stop = new AbortController();
    const t = await transport({ signal: stop.signal, queryTimeoutMs: 60_000 });
    stub.handler = (req, res) => (req.method === 'POST' ? 'hang' : happy(req, res));
    const query = t.execute(QUERY, undefined, 'Settings');
    await expect.poll(() => posts()).toBe(1);
    stop.abort(new Error('stopped by SIGTERM'));
    await expect(query).rejects.toThrow('stopped by SIGTERM');
    expect(posts()).toBe(1);
    expect(waits).toEqual([]);
  });

  it('aborts the wait before a retry when the run is stopped during it', async () => {
    const stop = new AbortController();
    const t = await transport({
      signal: stop.signal,
      sleep: () => {
        stop.abort(new Error('stopped by SIGTERM'));
        return new Promise(() => {}); // a wait that would never end by itself
      },
    });
    stub.handler = (req, res) =>
      req.method === 'POST' ? sendJson(res, 503, { message: 'busy' }) : happy(req, res);
    await expect(t.execute(QUERY, undefined, 'Settings')).rejects.toThrow('stopped by SIGTERM');
    expect(posts()).toBe(1);
  });

  it('gives up at the deadline, which counts only the time spent waiting for the server', async () => {
    const t = await transport({ deadlineMs: 300, queryTimeoutMs: 60_000 });
    // Idle time between queries (a run's cluster work) is not spent.
    await new Promise((r) => setTimeout(r, 400));
    expect((await t.execute(QUERY, undefined, 'Settings')).data).toBeDefined();
    stub.handler = (req, res) => (req.method === 'POST' ? 'hang' : happy(req, res));
    const deadline =
      `GraphQL query Settings failed: the GraphQL server at ${stub.origin}/graphql did not answer ` +
      'within 0.3s, the deadline for all GraphQL requests of a run (QONTRACT_GQL_DEADLINE_SECS)';
    await expect(t.execute(QUERY, undefined, 'Settings')).rejects.toThrow(deadline);
    // Once it has passed, no request is sent any more.
    const sent = posts();
    await expect(t.execute(QUERY, undefined, 'Settings')).rejects.toThrow(deadline);
    expect(posts()).toBe(sent);
  });

  it('reports a server that cannot be reached', async () => {
    const closed = await startStubServer(happy);
    await closed.close();
    const e = await failure(
      transport({ server: `${closed.origin}/graphql`, retry: { attempts: 2, delayMs: 1 } }),
    );
    expect(e).toBeInstanceOf(GqlBackendError);
    expect(e.message).toBe(
      `cannot read the current bundle sha from ${closed.origin}/graphql: could not connect to GraphQL server at ${closed.origin}/sha256 (ECONNREFUSED) (gave up after 2 attempts)`,
    );
  });

  it('says what /sha256 answered when it is not a sha, and does not retry it', async () => {
    stub.handler = (req, res) =>
      req.url === '/sha256' ? sendText(res, 200, '<html>') : happy(req, res);
    await expect(transport()).rejects.toThrow(
      `cannot read the current bundle sha from ${stub.origin}/graphql: ${stub.origin}/sha256 answered ` +
        'HTTP 200 (text/plain), not a bundle sha: "<html>"',
    );
    expect(stub.requests).toHaveLength(1);
    stub.handler = (req, res) =>
      req.url === '/sha256' ? sendText(res, 401, 'no') : happy(req, res);
    await expect(transport()).rejects.toThrow(
      `cannot read the current bundle sha from ${stub.origin}/graphql: HTTP 401 (text/plain) from ${stub.origin}/sha256: "no"`,
    );
    expect(stub.requests).toHaveLength(2);
  });

  it('retries /sha256 5xx answers and reports the last one', async () => {
    stub.handler = (req, res) =>
      req.url === '/sha256' ? sendText(res, 502, 'upstream down') : happy(req, res);
    await expect(transport({ retry: { attempts: 3, delayMs: 1 } })).rejects.toThrow(
      `cannot read the current bundle sha from ${stub.origin}/graphql: HTTP 502 (text/plain) from ${stub.origin}/sha256: "upstream down" (gave up after 3 attempts)`,
    );
    expect(stub.requests).toHaveLength(3);
  });

  it('keeps credentials in the server URL out of endpoints and messages', async () => {
    const withUser = stub.origin.replace('http://', 'http://user:hunter2@');
    const t = await transport({ server: `${withUser}/graphql` });
    expect(t.endpoint).toBe(`${stub.origin}/graphqlsha/${SHA}`);
    stub.handler = (req, res) => (req.method === 'POST' ? sendText(res, 500, '') : happy(req, res));
    const e = await failure(t.execute(QUERY, undefined, 'Settings'));
    expect(e.message).not.toContain('hunter2');
  });

  it('carries on without commit info when /git-commit-info fails', async () => {
    stub.handler = (req, res) =>
      req.url.startsWith('/git-commit-info')
        ? sendText(res, 404, 'Bundle not found')
        : happy(req, res);
    const t = await transport();
    expect(t.gitCommit).toBeNull();
    expect(t.sha).toBe(SHA);
  });
});
