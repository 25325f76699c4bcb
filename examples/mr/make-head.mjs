#!/usr/bin/env node
// Makes the head tree of an example merge request from a base app-interface
// tree: copies BASE to HEAD, then edits HEAD as the MR would.
//
//   node examples/mr/make-head.mjs BASE HEAD [SCENARIO]
//
// Plain JavaScript so that it runs on any Node. Scenarios (default: namespace):
//   namespace  one namespace file changes a template variable: the stage
//              settings ConfigMap on appint-ex-01 gets a new GREETING
//   resource   the settings template, used on appint-ex-01 and appint-ex-02,
//              ends every GREETING with "!": a ConfigMap changes on each cluster
//   secret     the stage namespace takes its database credentials from another
//              secret: the Secret's values change (the report shows none)
//   unrelated  a user's display name changes: nothing the OpenShift
//              integrations read
//   invalid    a namespace file points at a cluster file that does not exist
//   template   the settings template calls a filter that does not exist
//   saas       the example app's saas file runs 2 replicas in stage (a target
//              parameter): the change tester dry-runs saas-example-app in
//              example-stage only
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const STAGE = 'data/services/example-app/namespaces/example-app-stage.yml';
const SAAS_APP = 'data/services/example-app/cicd/saas-example-app.yml';

/** Each scenario: [file under the tree, text to find, its replacement]. */
const SCENARIOS = {
  namespace: [[STAGE, 'greeting: hello from stage', 'greeting: hello from the merge request']],
  resource: [
    [
      'resources/example-app/settings-configmap.yml.j2',
      `GREETING: "{{ greeting }}"`,
      `GREETING: "{{ greeting }}!"`,
    ],
  ],
  secret: [
    [
      STAGE,
      'path: app-interface/example-app/stage/db-credentials',
      'path: app-interface/example-app/production/db-credentials',
    ],
  ],
  unrelated: [['data/access/users/dave.yml', 'name: Dave Contractor', 'name: Dave the Contractor']],
  invalid: [
    [
      STAGE,
      '$ref: /openshift/appint-ex-01/cluster.yml',
      '$ref: /openshift/appint-ex-09/cluster.yml',
    ],
  ],
  template: [
    [
      'resources/example-app/settings-configmap.yml.j2',
      `GREETING: "{{ greeting }}"`,
      `GREETING: "{{ greeting | shout }}"`,
    ],
  ],
  // The stage target is the only one with REPLICAS: 1.
  saas: [[SAAS_APP, 'REPLICAS: 1', 'REPLICAS: 2']],
};

const [base, head, scenario = 'namespace'] = process.argv.slice(2);
const edits = SCENARIOS[scenario];
if (!base || !head || !edits) {
  process.stderr.write(`usage: make-head.mjs BASE HEAD [${Object.keys(SCENARIOS).join('|')}]\n`);
  process.exit(2);
}
// Never overwrite anything: HEAD is new or an empty directory.
const existing = await readdir(head).catch(() => []);
if (existing.length > 0) {
  process.stderr.write(`${head} is not empty; give a new or empty directory\n`);
  process.exit(1);
}
await cp(base, head, { recursive: true });
for (const [file, from, to] of edits) {
  const path = join(head, file);
  const text = await readFile(path, 'utf8');
  if (!text.includes(from)) {
    process.stderr.write(`${path}: '${from}' not found; is BASE the example app-interface?\n`);
    process.exit(1);
  }
  await writeFile(path, text.replace(from, to));
}
process.stdout.write(`${head}: the '${scenario}' merge request of ${base}\n`);
