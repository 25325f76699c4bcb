// Renders the cases written by tools/jinja2-fuzz.py and prints where this
// package differs from Jinja2. Usage: node tools/jinja2-fuzz-compare.ts OUT.json
import { readFileSync } from 'node:fs';
import { parseTemplateVariables, renderTemplate } from '../src/index.ts';
import type { PyDict } from '../src/values.ts';

interface FuzzCase {
  template: string;
  expected?: string;
  error?: string;
}

const file = process.argv[2] ?? 'jinja2-fuzz-cases.json';
const text = readFileSync(file, 'utf8');
const { cases, whitespace, extracurly } = JSON.parse(text) as {
  cases: FuzzCase[];
  whitespace?: string[];
  extracurly?: boolean;
};
// The variables are read as template variables (floats stay floats, key order is kept).
const variables = Object.fromEntries((parseTemplateVariables(text).variables as PyDict).entries());
const enabled = new Set(whitespace ?? []);
const options = {
  trimBlocks: enabled.has('trim_blocks'),
  lstripBlocks: enabled.has('lstrip_blocks'),
  keepTrailingNewline: enabled.has('keep_trailing_newline'),
};
let differences = 0;
for (const c of cases) {
  let got: string;
  let failed = false;
  try {
    got = await renderTemplate(c.template, {
      type: extracurly ? 'extracurlyjinja2' : 'jinja2',
      path: 'fuzz',
      variables,
      helpers: {},
      whitespace: options,
    });
  } catch (e) {
    got = e instanceof Error ? e.message : String(e);
    failed = true;
  }
  const same = c.error !== undefined ? failed : !failed && got === c.expected;
  if (!same) {
    differences++;
    process.stdout.write(
      `${JSON.stringify(c.template)}\n  jinja2: ${JSON.stringify(c.error ?? c.expected)}\n  ours:   ${JSON.stringify(got)}\n`,
    );
  }
}
process.stdout.write(`${differences} differences in ${cases.length} cases\n`);
process.exitCode = differences ? 1 : 0;
