// Renders one template file the way openshift-resources does, without any
// outside access (use `_template_mocks` in the variables for vault, github, ...).
//
//   node tools/render-template.ts TEMPLATE [--variables VARS.json] [--type extracurlyjinja2]
//        [--resource RESOURCE.json] [--trim-blocks] [--lstrip-blocks] [--keep-trailing-newline]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  parseTemplateVariables,
  renderTemplate,
  TemplateError,
  type TemplateType,
} from '../src/index.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    variables: { type: 'string' },
    resource: { type: 'string' },
    type: { type: 'string', default: 'jinja2' },
    'trim-blocks': { type: 'boolean', default: false },
    'lstrip-blocks': { type: 'boolean', default: false },
    'keep-trailing-newline': { type: 'boolean', default: false },
  },
});
const file = positionals[0];
if (!file) {
  process.stderr.write(
    'usage: render-template.ts TEMPLATE [--variables VARS.json] [--type extracurlyjinja2]\n',
  );
  process.exit(2);
}
const variables = values.variables
  ? parseTemplateVariables(readFileSync(values.variables, 'utf8'))
  : {};
if (values.resource)
  variables.resource = JSON.parse(readFileSync(values.resource, 'utf8')) as unknown;
try {
  const out = await renderTemplate(readFileSync(file, 'utf8'), {
    type: values.type as TemplateType,
    path: file,
    variables,
    helpers: {},
    whitespace: {
      trimBlocks: values['trim-blocks'],
      lstripBlocks: values['lstrip-blocks'],
      keepTrailingNewline: values['keep-trailing-newline'],
    },
  });
  process.stdout.write(out.endsWith('\n') ? out : `${out}\n`);
} catch (e) {
  if (!(e instanceof TemplateError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exitCode = 1;
}
