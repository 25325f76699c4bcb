import { type FakeRegistry, startFakeRegistry } from '@qontract/testing/fake-registry';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createImageLookup,
  type ImageAuth,
  type ImageLookup,
  imageAuthFromSecret,
  imageDigest,
  parseImageReference,
  RegistryClient,
  type RegistryClientOptions,
  RegistryError,
  validateTargetImages,
} from './registry.ts';

const LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
const ROBOT = { user: 'org+deployer', token: 'robot-secret-token' };
const dockerConfig = (auths: Record<string, [string, string]>) =>
  JSON.stringify({
    auths: Object.fromEntries(
      Object.entries(auths).map(([k, [u, p]]) => [
        k,
        { auth: Buffer.from(`${u}:${p}`).toString('base64') },
      ]),
    ),
  });

describe('parseImageReference', () => {
  it.each([
    ['nginx', 'docker.io', 'library/nginx', 'latest', undefined],
    ['nginx:1.25', 'docker.io', 'library/nginx', '1.25', undefined],
    ['docker.io/fedora', 'docker.io', 'library/fedora', 'latest', undefined],
    ['index.docker.io/user/app:v1', 'docker.io', 'user/app', 'v1', undefined],
    ['user/app', 'docker.io', 'user/app', 'latest', undefined],
    [
      'quay.io/app-sre/qontract-reconcile:abc123',
      'quay.io',
      'app-sre/qontract-reconcile',
      'abc123',
      undefined,
    ],
    ['quay.io/app', 'quay.io', 'app', 'latest', undefined],
    ['registry.example.com:5000/a/b/c:v2', 'registry.example.com:5000', 'a/b/c', 'v2', undefined],
    ['localhost/app', 'localhost', 'app', 'latest', undefined],
    ['localhost:5000/app:t', 'localhost:5000', 'app', 't', undefined],
    ['[::1]:5000/app:t', '[::1]:5000', 'app', 't', undefined],
    ['docker://quay.io/org/app:v1', 'quay.io', 'org/app', 'v1', undefined],
    [
      `quay.io/org/app@sha256:${'a'.repeat(64)}`,
      'quay.io',
      'org/app',
      undefined,
      `sha256:${'a'.repeat(64)}`,
    ],
    [
      `quay.io/org/app:v1@sha256:${'b'.repeat(64)}`,
      'quay.io',
      'org/app',
      'v1',
      `sha256:${'b'.repeat(64)}`,
    ],
  ])('%s', (image, registry, repository, tag, digest) => {
    expect(parseImageReference(image)).toEqual({ registry, repository, tag, digest });
  });

  it.each([
    ['quay.io/Org/App', /bad repository name/],
    ['quay.io/org/app@sha256:abc', /bad digest/],
    ['quay.io/org/app:-bad', /bad tag/],
    ['', /bad repository name/],
    ['quay.io/org//app', /bad repository name/],
  ])('refuses %j', (image, why) => {
    expect(() => parseImageReference(image)).toThrow(why);
  });
});

describe('imageAuthFromSecret', () => {
  it('reads user + token (+ url)', () => {
    expect(imageAuthFromSecret({ user: 'u', token: 't', url: 'quay.io' }, 'p')).toEqual({
      username: 'u',
      password: 't',
      authServer: 'quay.io',
    });
  });

  it('reads .dockerconfigjson in the order of its auths, splitting at the first colon', () => {
    const auth = imageAuthFromSecret(
      { '.dockerconfigjson': dockerConfig({ 'quay.io/a': ['a', 'x:y'], 'quay.io': ['b', 'z'] }) },
      'p',
    );
    expect(auth.dockerConfigAuths).toEqual([
      { registry: 'quay.io/a', username: 'a', password: 'x:y' },
      { registry: 'quay.io', username: 'b', password: 'z' },
    ]);
  });

  it('warns and stays anonymous without the required keys', () => {
    const warnings: string[] = [];
    expect(imageAuthFromSecret({ user: 'u' }, 'app-sre/creds', (m) => warnings.push(m))).toEqual(
      {},
    );
    expect(warnings).toEqual([
      "the specified image authentication secret found in path app-sre/creds does not contain all required keys: ['.dockerconfigjson'] or ['user', 'token']",
    ]);
  });

  it('names the secret but never shows its value when the docker config is bad', () => {
    const secret = '{"auths": {"quay.io": {"auth": "s3cr3t-value"';
    expect(() => imageAuthFromSecret({ '.dockerconfigjson': secret }, 'app-sre/img')).toThrow(
      /^image authentication secret app-sre\/img: \.dockerconfigjson is not valid JSON$/,
    );
    const noColon = JSON.stringify({
      auths: { 'quay.io': { auth: Buffer.from('nocolon').toString('base64') } },
    });
    expect(() => imageAuthFromSecret({ '.dockerconfigjson': noColon }, 'app-sre/img')).toThrow(
      'app-sre/img: auths.quay.io.auth is not base64 of user:password',
    );
    expect(() =>
      imageAuthFromSecret({ '.dockerconfigjson': '{"auths": {"q": {}}}' }, 'app-sre/img'),
    ).toThrow(/must be \{"auths"/);
  });
});

describe('RegistryClient against the fake registry', () => {
  let registry: FakeRegistry;
  let sleeps: number[];
  const client = (options: RegistryClientOptions = {}) =>
    new RegistryClient({
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      ...options,
    });
  const lookup = (image: string, auth: ImageAuth = {}, options: RegistryClientOptions = {}) =>
    createImageLookup(client(options))(image, auth);

  beforeEach(async () => {
    sleeps = [];
    registry = await startFakeRegistry({ users: { [ROBOT.user]: ROBOT.token, alice: 'pw' } });
  });
  afterEach(() => registry.close());

  it('looks up a public image with an anonymous token: HEAD, token, HEAD', async () => {
    const digest = registry.pushImage('org/app', 'v1');
    await expect(lookup(`${registry.host}/org/app:v1`)).resolves.toEqual({
      digest,
      mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
    });
    expect(registry.requestLog.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'HEAD /v2/org/app/manifests/v1 401',
      'GET /v2/auth 200',
      'HEAD /v2/org/app/manifests/v1 200',
    ]);
    expect(registry.requestLog[1]?.query).toContain('scope=repository%3Aorg%2Fapp%3Apull');
  });

  it("asks for the next repository's token before its first request (the challenge is known)", async () => {
    registry.pushImage('org/app', 'v1');
    registry.pushImage('org/other', 'v1');
    const run = createImageLookup(client());
    await run(`${registry.host}/org/app:v1`, {});
    await run(`${registry.host}/org/other:v1`, {});
    expect(registry.requestLog.slice(3).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'GET /v2/auth 200',
      'HEAD /v2/org/other/manifests/v1 200',
    ]);
    expect(registry.requestLog[3]?.query).toContain('scope=repository%3Aorg%2Fother%3Apull');
  });

  it('looks up a private image with user + token', async () => {
    const digest = registry.pushImage('org/private', 'v1', { private: true });
    const auth = imageAuthFromSecret(ROBOT, 'app-sre/img');
    await expect(lookup(`${registry.host}/org/private:v1`, auth)).resolves.toMatchObject({
      digest,
    });
  });

  it('looks up a private image with the first matching .dockerconfigjson entry', async () => {
    const digest = registry.pushImage('org/private', 'v1', { private: true });
    const auth = imageAuthFromSecret(
      {
        '.dockerconfigjson': dockerConfig({
          'quay.io': ['someone', 'else'],
          [registry.host]: ['alice', 'pw'],
          [`${registry.host}/org`]: ['alice', 'not-reached'],
        }),
      },
      'app-sre/img',
    );
    await expect(lookup(`${registry.host}/org/private:v1`, auth)).resolves.toMatchObject({
      digest,
    });
  });

  it('sends no credentials when url names another registry', async () => {
    registry.pushImage('org/private', 'v1', { private: true });
    const auth = imageAuthFromSecret({ ...ROBOT, url: 'quay.io' }, 'app-sre/img');
    await expect(lookup(`${registry.host}/org/private:v1`, auth)).rejects.toThrow(/HTTP 401/);
    const authorizations = registry.requestLog.filter((r) => r.path === '/v2/auth');
    expect(authorizations).toHaveLength(1);
  });

  it('fails clearly on a wrong password, never showing it', async () => {
    registry.pushImage('org/private', 'v1', { private: true });
    const password = 'wrong-password-123';
    const error = await lookup(`${registry.host}/org/private:v1`, {
      username: ROBOT.user,
      password,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegistryError);
    const message = (error as Error).message;
    expect(message).toBe(
      `GET http://${registry.host}/v2/org/private/manifests/v1: HTTP 401: authentication required (UNAUTHORIZED) (the token server refused the credentials)`,
    );
    expect(message).not.toContain(password);
    expect(message).not.toContain(Buffer.from(`${ROBOT.user}:${password}`).toString('base64'));
  });

  it('gives undefined for an unknown tag or repository', async () => {
    registry.pushImage('org/app', 'v1');
    await expect(lookup(`${registry.host}/org/app:nope`)).resolves.toBeUndefined();
    await expect(lookup(`${registry.host}/org/none:v1`)).resolves.toBeUndefined();
  });

  it('looks up a digest reference', async () => {
    const digest = registry.pushImage('org/app', 'v1');
    await expect(lookup(`${registry.host}/org/app@${digest}`)).resolves.toMatchObject({ digest });
    const missing = `sha256:${'0'.repeat(64)}`;
    await expect(lookup(`${registry.host}/org/app@${missing}`)).resolves.toBeUndefined();
  });

  it('waits as Retry-After asks on a 429, then succeeds', async () => {
    const digest = registry.pushImage('org/app', 'v1');
    registry.faults.add({
      path: '/manifests/',
      status: 429,
      headers: { 'Retry-After': '2' },
      body: { errors: [{ code: 'TOOMANYREQUESTS', message: 'slow down' }] },
      times: 1,
    });
    const retries: string[] = [];
    await expect(
      lookup(`${registry.host}/org/app:v1`, {}, { onRetry: (m) => retries.push(m) }),
    ).resolves.toMatchObject({ digest });
    expect(sleeps).toEqual([2000]);
    expect(retries).toEqual([
      `HEAD http://${registry.host}/v2/org/app/manifests/v1: HTTP 429, retrying in 2s (attempt 1/5)`,
    ]);
  });

  it('gives up after the attempts on lasting 5xx, bounding the waits', async () => {
    registry.pushImage('org/app', 'v1');
    registry.faults.add({ path: '/manifests/', status: 503, headers: { 'Retry-After': '600' } });
    const error = await lookup(
      `${registry.host}/org/app:v1`,
      {},
      { attempts: 3, maxWaitMs: 5000 },
    ).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      `HEAD http://${registry.host}/v2/org/app/manifests/v1: HTTP 503 (after 3 attempts)`,
    );
    expect(sleeps).toEqual([5000, 5000]);
  });

  it('returns the manifest list digest of a multi-arch image', async () => {
    const digest = registry.pushImage('org/multi', 'v1', { manifest: 'docker-list' });
    await expect(lookup(`${registry.host}/org/multi:v1`)).resolves.toEqual({
      digest,
      mediaType: LIST,
    });
  });

  it('falls back to GET when HEAD is not allowed', async () => {
    const digest = registry.pushImage('org/app', 'v1', { manifest: 'oci' });
    registry.faults.add({ method: 'HEAD', path: '/manifests/', status: 405 });
    await expect(lookup(`${registry.host}/org/app:v1`)).resolves.toEqual({
      digest,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
    });
    expect(registry.requestLog.at(-1)).toMatchObject({ method: 'GET', status: 200 });
  });

  it('speaks Basic auth to a registry that asks for it', async () => {
    const basic = await startFakeRegistry({ auth: 'basic', users: { alice: 'pw' } });
    try {
      const digest = basic.pushImage('org/private', 'v1', { private: true });
      const auth = { username: 'alice', password: 'pw' };
      await expect(lookup(`${basic.host}/org/private:v1`, auth)).resolves.toMatchObject({ digest });
      await expect(lookup(`${basic.host}/org/private:v1`)).rejects.toThrow(/HTTP 401/);
    } finally {
      await basic.close();
    }
  });

  it('stops when the run is aborted', async () => {
    registry.pushImage('org/app', 'v1');
    const controller = new AbortController();
    controller.abort(new Error('stopped'));
    await expect(
      lookup(`${registry.host}/org/app:v1`, {}, { signal: controller.signal }),
    ).rejects.toThrow('stopped');
    expect(registry.requestLog).toHaveLength(0);
  });

  it('makes one lookup per distinct image and credentials; concurrent callers share it', async () => {
    registry.pushImage('org/app', 'latest');
    registry.pushImage('org/private', 'v1', { private: true });
    const shared = createImageLookup(client());
    const robot = imageAuthFromSecret(ROBOT, 'app-sre/img');
    await Promise.all([
      shared(`${registry.host}/org/app`, {}),
      shared(`${registry.host}/org/app:latest`, {}),
      shared(`${registry.host}/org/app:latest`, {}),
      shared(`${registry.host}/org/private:v1`, robot),
      shared(`${registry.host}/org/private:v1`, { ...robot }),
    ]);
    await shared(`${registry.host}/org/app`, {});
    const manifestRequests = registry.requestLog.filter(
      (r) => r.path.includes('/manifests/') && r.status === 200,
    );
    expect(manifestRequests.map((r) => r.path).sort()).toEqual([
      '/v2/org/app/manifests/latest',
      '/v2/org/private/manifests/v1',
    ]);
    // Other credentials for the same image are another lookup.
    await shared(`${registry.host}/org/private:v1`, { username: 'alice', password: 'pw' });
    expect(
      registry.requestLog.filter(
        (r) => r.path === '/v2/org/private/manifests/v1' && r.status === 200,
      ),
    ).toHaveLength(2);
  });
});

describe('RegistryClient schemes', () => {
  /** A fetch that records the URLs asked for and answers 404. */
  function recording() {
    const urls: string[] = [];
    const fetchStub = (async (input: string | URL | Request) => {
      urls.push(String(input));
      return new Response(null, { status: 404 });
    }) as typeof fetch;
    return { urls, lookup: createImageLookup(new RegistryClient({ fetch: fetchStub })) };
  }

  it('speaks HTTPS to every registry but loopback ones', async () => {
    const { urls, lookup } = recording();
    for (const image of [
      'nginx',
      'quay.io/app-sre/app:v1',
      'registry.example.com:5000/a/b:v2',
      'localhost:5000/app:t',
      '127.0.0.2:5000/app:t',
      '[::1]:5000/app:t',
    ]) {
      await lookup(image, {});
    }
    expect(urls).toEqual([
      'https://registry-1.docker.io/v2/library/nginx/manifests/latest',
      'https://quay.io/v2/app-sre/app/manifests/v1',
      'https://registry.example.com:5000/v2/a/b/manifests/v2',
      'http://localhost:5000/v2/app/manifests/t',
      'http://127.0.0.2:5000/v2/app/manifests/t',
      'http://[::1]:5000/v2/app/manifests/t',
    ]);
  });

  it('never sends credentials to a token realm over plain HTTP', async () => {
    const urls: string[] = [];
    const fetchStub = (async (input: string | URL | Request) => {
      urls.push(String(input));
      return new Response(null, {
        status: 401,
        headers: { 'WWW-Authenticate': 'Bearer realm="http://auth.example.com/token",service="x"' },
      });
    }) as typeof fetch;
    const lookup = createImageLookup(new RegistryClient({ fetch: fetchStub }));
    await expect(lookup('quay.io/org/app:v1', { username: 'u', password: 'p' })).rejects.toThrow(
      'quay.io: token realm http://auth.example.com is not HTTPS',
    );
    expect(urls).toEqual(['https://quay.io/v2/org/app/manifests/v1']);
  });
});

describe('validateTargetImages', () => {
  const target = {
    saasFileName: 'saas-app',
    resourceTemplateName: 'app',
    cluster: 'c1',
    namespace: 'ns',
  };
  const P = '[saas-app/app] c1/ns:';
  /** A lookup that knows `quay.io/org/*:good`, fails on `:broken` and counts its calls. */
  const stubLookup = (): ImageLookup & { calls: string[] } => {
    const calls: string[] = [];
    const fn = async (image: string) => {
      calls.push(image);
      parseImageReference(image);
      if (image.endsWith(':broken')) throw new RegistryError('GET x: HTTP 500', 500);
      return image.endsWith(':good')
        ? { digest: `sha256:${'c'.repeat(64)}`, mediaType: undefined }
        : undefined;
    };
    return Object.assign(fn, { calls });
  };
  const prodRule = {
    environmentLabelSelector: { type: 'production' },
    imagePatterns: ['quay.io/org/dev-'],
  };

  it.each([
    { what: 'no images', images: [], patterns: ['quay.io/org/'], errors: [] },
    {
      what: 'all good',
      images: ['quay.io/org/a:good', 'quay.io/org/b:good'],
      patterns: ['quay.io/org/'],
      errors: [],
    },
    {
      what: 'empty imagePatterns',
      images: ['quay.io/org/a:good'],
      patterns: [],
      errors: [`${P} imagePatterns is empty (does not contain quay.io/org/a:good)`],
    },
    {
      what: 'no pattern prefixes the image',
      images: ['quay.io/other/a:good', 'quay.io/org/b:good'],
      patterns: ['quay.io/org/'],
      errors: [`${P} Image is not in imagePatterns: quay.io/other/a:good`],
    },
    {
      what: 'a missing manifest',
      images: ['quay.io/org/a:missing'],
      patterns: ['quay.io/org/'],
      errors: [`${P} Image does not exist: quay.io/org/a:missing`],
    },
    {
      what: 'a registry failure',
      images: ['quay.io/org/a:broken'],
      patterns: ['quay.io/org/'],
      errors: [`${P} Image is invalid: quay.io/org/a:broken. details: GET x: HTTP 500`],
    },
    {
      what: 'an unparseable image',
      images: ['quay.io/org/UPPER:good'],
      patterns: ['quay.io/org/'],
      errors: [
        `${P} Image is invalid: quay.io/org/UPPER:good. details: invalid image reference "quay.io/org/UPPER:good": bad repository name "org/UPPER"`,
      ],
    },
    {
      what: 'a blocked image in a matching environment (and nothing else checked)',
      images: ['quay.io/org/dev-a:good', 'quay.io/other/b:missing'],
      patterns: ['quay.io/org/'],
      labels: { type: 'production', region: 'eu' },
      errors: [
        `${P} Target contains blocked image patterns (quay.io/org/dev-) for environment matching selector {'type': 'production'}: quay.io/org/dev-a:good. These images are not allowed in this environment.`,
      ],
    },
    {
      what: 'a blocked pattern in another environment',
      images: ['quay.io/org/dev-a:good'],
      patterns: ['quay.io/org/'],
      labels: { type: 'stage' },
      errors: [],
    },
    {
      what: 'a blocked pattern where the environment has no labels',
      images: ['quay.io/org/dev-a:good'],
      patterns: ['quay.io/org/'],
      labels: {},
      errors: [],
    },
  ])('$what', async ({ images, patterns, labels, errors }) => {
    const lookup = stubLookup();
    await expect(
      validateTargetImages({
        target,
        images,
        imagePatterns: patterns,
        blockRules: [prodRule],
        environmentLabels: labels ?? { type: 'stage' },
        auth: {},
        lookup,
      }),
    ).resolves.toEqual(errors);
  });

  it('asks no registry for a target a block rule fails', async () => {
    const lookup = stubLookup();
    const errors = await validateTargetImages({
      target,
      images: ['quay.io/org/dev-a:good', 'quay.io/org/b:good'],
      imagePatterns: ['quay.io/org/'],
      blockRules: [{ environmentLabelSelector: {}, imagePatterns: ['quay.io/nothing'] }, prodRule],
      environmentLabels: { type: 'production' },
      auth: {},
      lookup,
    });
    expect(errors).toHaveLength(1);
    expect(lookup.calls).toEqual([]);
  });

  it('names the target in the messages when it has a name', async () => {
    const errors = await validateTargetImages({
      target: { ...target, targetName: 'canary' },
      images: ['x'],
      imagePatterns: ['quay.io/'],
      blockRules: null,
      environmentLabels: null,
      auth: {},
      lookup: stubLookup(),
    });
    expect(errors).toEqual([
      '[saas-app/app] c1/ns (target canary): Image is not in imagePatterns: x',
    ]);
  });

  it('validates against the fake registry, one lookup per image for many targets', async () => {
    const registry = await startFakeRegistry();
    try {
      registry.pushImage('org/app', 'abc1234');
      const requested: string[] = [];
      const lookup = createImageLookup(
        new RegistryClient({ onManifestRequest: (host) => requested.push(host) }),
      );
      const check = (namespace: string) =>
        validateTargetImages({
          target: { ...target, namespace },
          images: [`${registry.host}/org/app:abc1234`, `${registry.host}/org/app:gone`],
          imagePatterns: [`${registry.host}/org/`],
          blockRules: [],
          environmentLabels: {},
          auth: {},
          lookup,
        });
      const results = await Promise.all(['ns1', 'ns2', 'ns3'].map(check));
      expect(results).toEqual(
        ['ns1', 'ns2', 'ns3'].map((ns) => [
          `[saas-app/app] c1/${ns}: Image does not exist: ${registry.host}/org/app:gone`,
        ]),
      );
      expect(requested).toEqual([registry.host, registry.host]);
      const heads = registry.requestLog.filter((r) => r.method === 'HEAD' && r.status !== 401);
      expect(heads.map((r) => `${r.path} ${r.status}`).sort()).toEqual([
        '/v2/org/app/manifests/abc1234 200',
        '/v2/org/app/manifests/gone 404',
      ]);
    } finally {
      await registry.close();
    }
  });
});

describe('imageDigest', () => {
  let registry: FakeRegistry;
  beforeEach(async () => {
    registry = await startFakeRegistry({ users: { [ROBOT.user]: ROBOT.token } });
  });
  afterEach(() => registry.close());
  const target = {
    saasFileName: 'saas-app',
    resourceTemplateName: 'app',
    cluster: 'c1',
    namespace: 'ns',
  };

  it('gives REPO_DIGEST and IMAGE_DIGEST of REGISTRY_IMG:IMAGE_TAG', async () => {
    const digest = registry.pushImage('org/app', 'abc1234', { private: true });
    const lookup = createImageLookup(new RegistryClient());
    await expect(
      imageDigest(lookup, {
        registryImg: `${registry.host}/org/app`,
        tag: 'abc1234',
        imagePatterns: [`${registry.host}/org/`],
        auth: imageAuthFromSecret(ROBOT, 'app-sre/img'),
        target,
      }),
    ).resolves.toEqual({ repoDigest: `${registry.host}/org/app@${digest}`, imageDigest: digest });
  });

  it('fails with the reason when the image may not be used or does not exist', async () => {
    const lookup = createImageLookup(new RegistryClient());
    const options = {
      registryImg: `${registry.host}/org/app`,
      tag: 'abc1234',
      auth: {},
      target,
    };
    await expect(imageDigest(lookup, { ...options, imagePatterns: ['quay.io/'] })).rejects.toThrow(
      `[saas-app/app] c1/ns: Image is not in imagePatterns: ${registry.host}/org/app:abc1234`,
    );
    await expect(
      imageDigest(lookup, { ...options, imagePatterns: [`${registry.host}/`] }),
    ).rejects.toThrow(
      `[saas-app/app] c1/ns: Image does not exist: ${registry.host}/org/app:abc1234`,
    );
  });
});
