import {
  type DesiredBody,
  dictGet,
  dictSet,
  isDict,
  type PyDict,
  type PyObject,
  type PyValue,
  pyDeepCopy,
} from '@qontract/openshift';
import {
  dhmsToSeconds,
  secondsToHms,
  tektonNamespaceObjectName,
  tektonPipelineName,
  tektonSaasFileTaskName,
} from '@qontract/saas';
import {
  type DeployResources,
  type ObjectTemplate,
  OpenshiftTektonResourcesBadConfigError,
  type TektonProvider,
  type TektonSaasFile,
} from './providers.ts';
import { type RenderedTemplates, templateKey } from './templates.ts';

/**
 * The desired state of openshift-tekton-resources: pure functions of the
 * providers (namespaces being deleted already left out) and their rendered templates (the original's
 * `fetch_desired_resources`). No I/O here; the engine reads the clusters,
 * plans and applies.
 */

/** The kinds this integration reads, writes and may delete (its own objects only). */
export const MANAGED_TYPES = ['Pipeline', 'Task'] as const;

/** The step of a onePerSaasFile Task that runs openshift-saas-deploy and gets the deploy resources. */
const DEFAULT_DEPLOY_RESOURCES_STEP_NAME = 'qontract-reconcile';
/** The original's defaults when neither the saas file nor its provider sets deploy resources. */
const DEFAULT_DEPLOY_RESOURCES: DeployResources = {
  requests: { cpu: '300m', memory: '600Mi' },
  limits: { cpu: '300m', memory: '600Mi' },
};

type Body = PyObject | PyDict;

/** A Tekton object and where it came from. */
export interface TektonObject extends DesiredBody {
  readonly kind: (typeof MANAGED_TYPES)[number];
}

/**
 * Every Task and Pipeline of the providers, per provider in its namespace: each task template once
 * (`onePerNamespace`, `o-<name>`) or once per saas file (`onePerSaasFile`,
 * `o-<name>-<saas file>`, its deploy step's resources set), then one Pipeline
 * per saas file. Bad provider data throws the original's errors.
 */
export function desiredTektonObjects(
  providers: readonly TektonProvider[],
  rendered: RenderedTemplates,
): TektonObject[] {
  const out: TektonObject[] = [];
  for (const provider of providers) {
    const place = (kind: TektonObject['kind'], body: Body, template: ObjectTemplate) =>
      out.push({
        kind,
        cluster: provider.namespace.cluster.name,
        namespace: provider.namespace.name,
        source: `${template.path} (pipelines provider ${provider.name})`,
        body: body as unknown as TektonObject['body'],
      });

    const taskTypes = new Map<string, string>();
    for (const template of provider.taskTemplates) {
      taskTypes.set(template.name, template.type);
      if (template.type === 'onePerNamespace') {
        place('Task', namespaceTask(template, rendered), template);
      } else if (template.type === 'onePerSaasFile') {
        const fallback = provider.deployResources ?? DEFAULT_DEPLOY_RESOURCES;
        for (const sf of provider.saasFiles) {
          place('Task', saasFileTask(template, rendered, sf, fallback), template);
        }
      } else {
        throw new OpenshiftTektonResourcesBadConfigError(
          `Unknown type [${template.type}] in tekton provider [${provider.name}]`,
        );
      }
    }
    if (taskTypes.size !== provider.taskTemplates.length) {
      throw new OpenshiftTektonResourcesBadConfigError(
        `There are duplicates in task templates names in tekton provider ${provider.name}`,
      );
    }
    for (const sf of provider.saasFiles) {
      place(
        'Pipeline',
        pipeline(provider.pipelineTemplate, rendered, sf, taskTypes),
        provider.pipelineTemplate,
      );
    }
  }
  return out;
}

/** A fresh copy of a template's rendered body, named. */
function instantiate(template: ObjectTemplate, rendered: RenderedTemplates, name: string): Body {
  const found = rendered.get(templateKey(template));
  if (!found) throw new Error(`template ${template.path} was not rendered`); // a bug, not data
  const body = pyDeepCopy(found);
  dictSet(mapping(dictGet(body, 'metadata'), `metadata of ${template.path}`), 'name', name);
  return body;
}

function namespaceTask(template: ObjectTemplate, rendered: RenderedTemplates): Body {
  return instantiate(template, rendered, tektonNamespaceObjectName(template.name));
}

function saasFileTask(
  template: ObjectTemplate,
  rendered: RenderedTemplates,
  saasFile: TektonSaasFile,
  fallback: DeployResources,
): Body {
  const task = instantiate(
    template,
    rendered,
    tektonSaasFileTaskName(template.name, saasFile.name),
  );
  const stepName = DEFAULT_DEPLOY_RESOURCES_STEP_NAME;
  const spec = mapping(dictGet(task, 'spec'), `spec of ${template.path}`);
  const step = list(dictGet(spec, 'steps'), `spec.steps of ${template.path}`).find(
    (s) => isDict(s) && dictGet(s, 'name') === stepName,
  );
  if (!step || !isDict(step)) {
    throw new OpenshiftTektonResourcesBadConfigError(
      `Cannot find a step named ${stepName} to set resources in task template ${template.name}`,
    );
  }
  dictSet(step, 'computeResources', computeResources(saasFile.deployResources ?? fallback));
  return task;
}

/** `requests` and `limits` without their unset values (the original's `_curate_deploy_resources`). */
export function computeResources(resources: DeployResources): PyObject {
  const out: PyObject = {};
  for (const [key, values] of Object.entries(resources)) {
    if (values === null || values === undefined) continue;
    out[key] = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null));
  }
  return out;
}

function pipeline(
  template: ObjectTemplate,
  rendered: RenderedTemplates,
  saasFile: TektonSaasFile,
  taskTypes: ReadonlyMap<string, string>,
): Body {
  const body = instantiate(template, rendered, tektonPipelineName(template.name, saasFile.name));
  const timeout = saasFile.timeout ? secondsToHms(dhmsToSeconds(saasFile.timeout)) : undefined;
  const spec = mapping(dictGet(body, 'spec'), `spec of ${template.path}`);
  for (const section of ['tasks', 'finally']) {
    for (const task of list(dictGet(spec, section), `spec.${section} of ${template.path}`)) {
      const t = mapping(task, `a task of spec.${section} of ${template.path}`);
      const name = String(dictGet(t, 'name'));
      const type = taskTypes.get(name);
      if (type === undefined) {
        throw new OpenshiftTektonResourcesBadConfigError(
          `Unknown task ${name} in pipeline template ${template.name}`,
        );
      }
      const taskRef = mapping(dictGet(t, 'taskRef'), `taskRef of task ${name} of ${template.path}`);
      dictSet(
        taskRef,
        'name',
        type === 'onePerNamespace'
          ? tektonNamespaceObjectName(name)
          : tektonSaasFileTaskName(name, saasFile.name),
      );
      if (timeout !== undefined) dictSet(t, 'timeout', timeout);
    }
  }
  return body;
}

function mapping(value: PyValue | undefined, what: string): Body {
  if (!isDict(value)) throw new OpenshiftTektonResourcesBadConfigError(`${what} is not a mapping`);
  return value;
}

function list(value: PyValue | undefined, what: string): PyValue[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw new OpenshiftTektonResourcesBadConfigError(`${what} is not a list`);
  return value;
}
