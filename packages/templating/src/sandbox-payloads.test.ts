import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { RenderLimits } from './context.ts';
import { renderTemplate, TemplateError } from './index.ts';

// The sandbox payload corpus (fixtures/sandbox-payloads.yml, one hostile
// template per entry; its header says how to add one). Every entry: nothing
// escapes, nothing outlives its time budget, a failure names the template.

interface Payload {
  readonly class: string;
  readonly payload: string;
  readonly expect: 'error' | 'renders' | 'either';
  readonly error?: string;
  readonly renders?: string;
  readonly limits?: 'small' | Partial<RenderLimits>;
  readonly variables?: string;
  readonly expand?: Record<string, [string, number]>;
  readonly note?: string;
}

const PAYLOADS = parse(
  readFileSync(join(import.meta.dirname, 'fixtures/sandbox-payloads.yml'), 'utf8'),
) as Payload[];

const PATH = '/sandbox/payload.yml';
const CANARY = 'canary-3f1c9e-must-not-leak';
const SMALL: Partial<RenderLimits> = {
  maxOutputChars: 10_000,
  maxIterations: 1_000,
  maxCallDepth: 20,
};
/** Every render's budget: a payload that hangs fails here, not at the test's time-out. */
const BUDGET_MS = 5_000;

function templateOf(p: Payload): string {
  let text = p.payload;
  for (const [placeholder, [unit, times]] of Object.entries(p.expand ?? {})) {
    text = text.replaceAll(placeholder, unit.repeat(times));
  }
  return text;
}

async function render(p: Payload): Promise<string | TemplateError> {
  const limits = p.limits === 'small' ? SMALL : (p.limits ?? {});
  try {
    return await renderTemplate(templateOf(p), {
      type: 'jinja2',
      path: PATH,
      variables: {
        resource: {
          provider: 'resource-template',
          namespace: { name: 'ns', cluster: { name: 'c' } },
        },
        x: { a: 1 },
        s: 'text',
        xs: [1, 2],
        t: '{{ t|eval(t=t) }}',
        // JSON.parse makes `__proto__` an own key, as a variables JSON string does.
        ...(p.variables ? (JSON.parse(p.variables) as Record<string, unknown>) : {}),
      },
      helpers: {},
      limits: { maxRenderMillis: BUDGET_MS, ...limits },
    });
  } catch (e) {
    if (e instanceof TemplateError) return e;
    throw e;
  }
}

/** What a render must never show: the runtime's functions, objects and environment. */
const RUNTIME = /native code|\[object |function \w*\(|process\.|uid=/;

describe('sandbox payload corpus', () => {
  beforeAll(() => {
    process.env.QR_TEMPLATING_CANARY = CANARY;
    (globalThis as Record<string, unknown>).qrTemplatingCanary = CANARY;
  });
  afterAll(() => {
    delete process.env.QR_TEMPLATING_CANARY;
    delete (globalThis as Record<string, unknown>).qrTemplatingCanary;
  });

  it.each(PAYLOADS.map((p, i) => [`${i + 1} ${p.class}: ${p.note ?? p.payload.slice(0, 80)}`, p]))(
    '%s',
    async (_name, p) => {
      const result = await render(p);
      const text = result instanceof TemplateError ? result.message : result;
      expect(text).not.toContain(CANARY);
      expect(text).not.toMatch(RUNTIME);
      // Nothing reached a prototype, whatever the template did with `__proto__`.
      expect(Object.prototype).not.toHaveProperty('polluted');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      if (result instanceof TemplateError) {
        expect(p.expect, `failed: ${result.message}`).not.toBe('renders');
        expect(result.path).toBe(PATH);
        expect(result.message.startsWith(`error processing jinja2 template (${PATH}`)).toBe(true);
        if (p.error) expect(result.message).toMatch(new RegExp(p.error));
      } else {
        expect(p.expect, `rendered: ${result.slice(0, 200)}`).not.toBe('error');
        if (p.renders !== undefined) expect(result).toBe(p.renders);
        else expect(result).not.toMatch(/Function|Object|prototype|global|require|env/i);
      }
    },
  );
});
