import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTemplateVariables, renderTemplate, TemplateError } from './index.ts';
import type { PyDict } from './values.ts';

interface CompatCase {
  name: string;
  template: string;
  variables: Record<string, unknown>;
  expected?: string;
  error?: boolean;
  jinja2_error?: string;
  whitespace?: ('trim_blocks' | 'lstrip_blocks' | 'keep_trailing_newline')[];
}

// Each case's expectation was produced by real Jinja2 3.1 (SandboxedEnvironment,
// StrictUndefined); `tools/jinja2-oracle.py` re-checks the table against it.
// Variables are read like template variables, so that `1.0` stays a float and
// keys keep their order, as in Python.
const table = readFileSync(new URL('./fixtures/jinja2-cases.json', import.meta.url), 'utf8');
const parsed = parseTemplateVariables(`{"cases": ${table}}`).cases as PyDict[];
const cases = (JSON.parse(table) as CompatCase[]).map((c, i) => ({
  ...c,
  variables: Object.fromEntries((parsed[i]!.get('variables') as PyDict).entries()),
}));

const render = (c: CompatCase) =>
  renderTemplate(c.template, {
    type: 'jinja2',
    path: `/compat/${c.name}.yml`,
    variables: c.variables,
    helpers: {},
    whitespace: {
      trimBlocks: c.whitespace?.includes('trim_blocks') ?? false,
      lstripBlocks: c.whitespace?.includes('lstrip_blocks') ?? false,
      keepTrailingNewline: c.whitespace?.includes('keep_trailing_newline') ?? false,
    },
  });

describe('Jinja2 compatibility (table checked against Jinja2 3.1)', () => {
  it('has a table', () => {
    expect(cases.length).toBeGreaterThan(100);
  });

  for (const c of cases.filter((x) => !x.error)) {
    it(`renders: ${c.name}`, async () => {
      expect(await render(c)).toBe(c.expected);
    });
  }

  for (const c of cases.filter((x) => x.error)) {
    it(`fails: ${c.name} (${c.jinja2_error ?? ''})`, async () => {
      const error = await render(c).then(
        (out) => new Error(`rendered ${JSON.stringify(out)}`),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TemplateError);
      expect((error as TemplateError).path).toBe(`/compat/${c.name}.yml`);
    });
  }
});
