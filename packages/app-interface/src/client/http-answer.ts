import { SecretRedactor } from '@qontract/core';

/** What an HTTP server answered, kept so that an error can say what came back. */
export interface HttpAnswer {
  /** The URL asked, without credentials. */
  readonly url: string;
  readonly status: number;
  readonly contentType: string | null;
  readonly body: string;
  readonly retryAfter: string | null;
}

/** Characters of a body shown in an error: enough to recognise a login page or a proxy error. */
const EXCERPT_LENGTH = 160;

/**
 * The answers retrying can change: a gateway or server error, a request
 * time-out, throttling. Every other status (a bad query, a bad token, a
 * missing bundle) comes back the same on the next attempt.
 */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/** `HTTP 503 (text/html) from <url>: "<excerpt>"`. */
export function describeStatus(answer: HttpAnswer, redactor: SecretRedactor): string {
  return `HTTP ${answer.status}${contentTypeOf(answer)} from ${answer.url}${bodyOf(answer, redactor)}`;
}

/** `<url> answered HTTP 200 (text/html), <problem>: "<excerpt>"`. */
export function describeMalformed(
  answer: HttpAnswer,
  problem: string,
  redactor: SecretRedactor,
): string {
  return `${answer.url} answered HTTP ${answer.status}${contentTypeOf(answer)}${problem}${bodyOf(answer, redactor)}`;
}

/**
 * A short, single-line excerpt of a body, safe for an error message: the
 * credentials the client sent are masked before it is shortened, and an HTML
 * page is reduced to its text (a login page says what it is in its title).
 */
function excerptOf(answer: HttpAnswer, redactor: SecretRedactor): string | null {
  const raw = oneLine(redactor.redact(answer.body));
  const isHtml = /html/i.test(answer.contentType ?? '') || /^<(!doctype|html)/i.test(raw);
  const text = (isHtml && oneLine(textOfHtml(raw))) || raw;
  if (text === '') return null;
  if (text.length <= EXCERPT_LENGTH) return `"${text}"`;
  return `"${text.slice(0, EXCERPT_LENGTH)}…" (${answer.body.length} characters)`;
}

/**
 * The wait a 429 or 503 asks for (`Retry-After`: seconds or an HTTP date), in
 * milliseconds; undefined when it asks for none or says something else.
 */
export function retryAfterMs(answer: HttpAnswer, now: number = Date.now()): number | undefined {
  const value = answer.retryAfter?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Masks what the client sends: the `Authorization` value (`Basic <b64>`), its
 * credential part, the password inside it, and a password in the server URL.
 */
export function credentialsRedactor(token: string | undefined, server: URL): SecretRedactor {
  const redactor = new SecretRedactor();
  if (token) {
    redactor.add(token);
    const credential = token.replace(/^[A-Za-z]+\s+/, '');
    redactor.add(credential);
    const decoded = Buffer.from(credential, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon >= 0 && Buffer.from(decoded, 'utf8').toString('base64') === credential) {
      redactor.add(decoded);
      redactor.add(decoded.slice(colon + 1));
    }
  }
  if (server.password) {
    redactor.add(server.password);
    redactor.add(decodeURIComponent(server.password));
  }
  return redactor;
}

function textOfHtml(html: string): string {
  return html
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<[^>]*>/g, ' ');
}

function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  return text.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
}

function contentTypeOf(answer: HttpAnswer): string {
  return answer.contentType ? ` (${answer.contentType})` : ' (no content type)';
}

function bodyOf(answer: HttpAnswer, redactor: SecretRedactor): string {
  const excerpt = excerptOf(answer, redactor);
  return excerpt === null ? ' with an empty body' : `: ${excerpt}`;
}
