/**
 * Follows every URL a fake hands out, the way a client other than ours may:
 * URLs in JSON answers (`url`, `*_url`, `href`, `self`, the values of
 * `_links`), in `Link` headers and in `Location` headers. URI templates
 * (RFC 6570) are expanded with no values (`{/member}` drops out); a URL that
 * needs a value (`statuses/{sha}`) is not fetchable as it is and is skipped.
 * Only GET, so crawling changes nothing. Test infrastructure for the fakes'
 * own tests.
 */

/** One URL the crawl fetched. */
export interface CrawledUrl {
  readonly url: string;
  /** Where it was handed out: the answer of `from`, under `key` (or a header). */
  readonly from: string;
  readonly key: string;
  readonly status: number;
  readonly contentType: string;
  /** The parsed JSON answer, the text of another text answer, undefined for bytes. */
  readonly body: unknown;
}

export interface CrawlOptions {
  /** The URLs to start from (those outside `within` are left out). */
  readonly start: readonly string[];
  /** Only URLs under this prefix (the fake's origin) are followed. */
  readonly within: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** JSON keys whose URLs are not the API's: pages for a browser, git remotes. */
  readonly ignoreKeys?: readonly string[];
  /** A bound on the number of fetches, so a fake handing out endless URLs fails instead of hanging. */
  readonly limit?: number;
}

/** Fetches the start URLs and every URL reachable from them, breadth first. */
export async function crawl(options: CrawlOptions): Promise<CrawledUrl[]> {
  const limit = options.limit ?? 1000;
  const ignore = new Set(options.ignoreKeys ?? []);
  const queue: Array<{ url: string; from: string; key: string }> = [];
  const seen = new Set<string>();
  const add = (url: string, from: string, key: string) => {
    const expanded = expandTemplate(url);
    if (expanded === undefined || !expanded.startsWith(options.within)) return;
    if (seen.has(expanded)) return;
    seen.add(expanded);
    queue.push({ url: expanded, from, key });
  };
  for (const url of options.start) add(url, '(start)', '');
  const out: CrawledUrl[] = [];
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (out.length >= limit) throw new Error(`crawl: more than ${limit} URLs, from ${next.from}`);
    const response = await fetch(next.url, {
      headers: { ...options.headers },
      redirect: 'manual',
    });
    const contentType = response.headers.get('content-type') ?? '';
    const body = await readBody(response, contentType);
    out.push({ ...next, status: response.status, contentType, body });
    const found = [
      ...urlsInJson(body, ignore),
      ...urlsInLinkHeader(response.headers.get('link')).map((url) => ({ key: 'Link', url })),
      ...(response.headers.get('location')
        ? [{ key: 'Location', url: response.headers.get('location')! }]
        : []),
    ];
    for (const { key, url } of found) add(url, next.url, key);
  }
  return out;
}

async function readBody(response: Response, contentType: string): Promise<unknown> {
  if (/json/.test(contentType)) {
    const text = await response.text();
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  }
  if (contentType.startsWith('text/')) return response.text();
  await response.arrayBuffer();
  return undefined;
}

/** The URLs of a JSON answer, with the key each was found under. */
export function urlsInJson(
  body: unknown,
  ignore: ReadonlySet<string> = new Set(),
): Array<{ key: string; url: string }> {
  const out: Array<{ key: string; url: string }> = [];
  const walk = (value: unknown, key: string, inLinks: boolean) => {
    if (typeof value === 'string') {
      const named = key === 'url' || key.endsWith('_url') || key === 'href' || key === 'self';
      if ((named || inLinks) && !ignore.has(key) && /^https?:\/\//.test(value)) {
        out.push({ key, url: value });
      }
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) walk(item, key, inLinks);
      return;
    }
    if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, k, inLinks || k === '_links');
    }
  };
  walk(body, '', false);
  return out;
}

function urlsInLinkHeader(header: string | null): string[] {
  return [...(header ?? '').matchAll(/<([^>]+)>/g)].map((m) => m[1]!);
}

/**
 * RFC 6570 expansion with every variable undefined: operator expressions
 * (`{/x}`, `{?x,y}`, `{+x}`, …) vanish; a simple `{x}` stands for a required
 * path segment, and such a URL is not fetchable (undefined).
 */
function expandTemplate(url: string): string | undefined {
  if (/\{[A-Za-z0-9_,]+\}/.test(url)) return undefined;
  return url.replace(/\{[/?&+#.;][^}]*\}/g, '');
}
