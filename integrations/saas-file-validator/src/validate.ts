import {
  isCommitSha,
  type SaasFile,
  type SaasResourceTemplate,
  type SaasTarget,
  saasFileEnvCombo,
  secretPathAllowed,
} from '@qontract/saas';

/** One violation: `scope` names the saas file (and resource template / target). */
export interface SaasFileProblem {
  readonly scope: string;
  readonly message: string;
}

/** What the saas files are checked against besides themselves. */
export interface ValidationContext {
  /** `codeComponents[].url` of every app. */
  readonly codeComponentUrls: ReadonlySet<string>;
  /** `url` of every Quay instance (a host, e.g. `quay.io`). */
  readonly quayInstanceUrls: ReadonlySet<string>;
  /** `(instance url, org name)` of every Quay organisation. */
  readonly quayOrgs: readonly { readonly instanceUrl: string; readonly name: string }[];
}

type SecretParameters = readonly { readonly secret: { readonly path: string } }[] | null;

/** A publishing or subscribing target: saas file path, resource template, its url, target id. */
interface TargetRef {
  readonly saasFilePath: string;
  readonly resourceTemplate: string;
  readonly url: string;
  readonly target: string;
}

const refKey = (r: TargetRef) =>
  JSON.stringify([r.saasFilePath, r.resourceTemplate, r.url, r.target]);

function targetId(sf: SaasFile, rt: SaasResourceTemplate, t: SaasTarget): string {
  return `${sf.name}:${rt.name}:${t.name ?? 'default'}:${t.namespace.cluster.name}:${t.namespace.name}`;
}

/**
 * The original's saas file validation (SaasHerder `_validate_saas_files`
 * and saas_file_validator's repository and Quay checks): every violation of
 * every saas file, in the original's order. Pure; upstream Jenkins jobs are
 * not checked (see the README).
 */
export function validateSaasFiles(
  saasFiles: readonly SaasFile[],
  context: ValidationContext,
): SaasFileProblem[] {
  const problems: SaasFileProblem[] = [];
  const report = (scope: string, message: string) => problems.push({ scope, message });

  const pathsByName = new Map<string, string[]>();
  const pipelineRuns = new Map<string, string>();
  const publications = new Map<string, Map<string, TargetRef>>();
  const subscriptions = new Map<string, TargetRef[]>();

  const checkSecretPaths = (sf: SaasFile, scope: string, secrets: SecretParameters) => {
    if (!secrets || secrets.length === 0) return;
    const allowed = sf.allowedSecretParameterPaths ?? [];
    if (allowed.length === 0) {
      report(scope, 'secret parameters are used but allowedSecretParameterPaths is missing');
      return;
    }
    for (const sp of secrets) {
      if (!allowed.some((a) => secretPathAllowed(sp.secret.path, a))) {
        report(
          scope,
          `secret parameter path '${sp.secret.path}' is not below any of allowedSecretParameterPaths (${allowed.join(', ')})`,
        );
      }
    }
  };

  for (const sf of saasFiles) {
    const fileScope = `saas file ${sf.name} (${sf.path})`;
    pathsByName.set(sf.name, [...(pathsByName.get(sf.name) ?? []), sf.path]);

    if (!sf.app.selfServiceRoles || sf.app.selfServiceRoles.length === 0) {
      report(fileScope, `app ${sf.app.name} has no self-service roles`);
    }
    checkSecretPaths(sf, fileScope, sf.secretParameters);

    for (const rt of sf.resourceTemplates) {
      const rtScope = `saas file ${sf.name} (${sf.path}), resource template ${rt.name}`;
      checkSecretPaths(sf, rtScope, rt.secretParameters);

      for (const t of rt.targets) {
        const ns = t.namespace;
        const scope = `${rtScope}, target ${t.name ? `${t.name} ` : ''}${ns.cluster.name}/${ns.name}`;

        // Tekton PipelineRun names: one per saas file and environment.
        const combo = saasFileEnvCombo(sf.name, ns.environment.name);
        const seen = pipelineRuns.get(combo.short);
        if (seen !== undefined && seen !== combo.long) {
          report(
            scope,
            `'${combo.long}' and '${seen}' give the same PipelineRun name '${combo.short}': saas file and environment names must differ in their first 56 characters`,
          );
        }
        pipelineRuns.set(combo.short, combo.long);

        const sha = isCommitSha(t.ref);
        if (t.promotion?.auto && !sha) {
          report(scope, `auto promotion needs a commit sha as ref, not '${t.ref}'`);
        }
        if (t.upstream && sha) {
          report(scope, `upstream cannot be used with a commit sha ref (${t.ref})`);
        }
        if (t.images && t.images.length > 0 && t.upstream) {
          report(scope, 'images cannot be used together with upstream');
        }
        if (t.images && t.images.length > 0 && sha) {
          report(
            scope,
            `images need a branch as ref, not the commit sha ${t.ref}: a fixed ref never picks up a new image`,
          );
        }
        if (t.promotion?.auto && t.promotion.subscribe && t.promotion.subscribe.length > 0) {
          const subscribed = new Set(t.promotion.subscribe);
          for (const pd of t.promotion.promotion_data ?? []) {
            if (pd.channel !== null && !subscribed.has(pd.channel)) {
              report(
                scope,
                `promotion_data for channel ${pd.channel}, which is not subscribed: remove it (was the subscription removed?)`,
              );
            }
          }
        }
        checkSecretPaths(sf, scope, t.secretParameters);
        checkSecretPaths(
          sf,
          `${scope}, environment ${ns.environment.name}`,
          ns.environment.secretParameters,
        );

        if (sf.validateTargetsInApp) {
          const apps = new Set([sf.app.name, ...(sf.app.parentApp ? [sf.app.parentApp.name] : [])]);
          if (!apps.has(ns.app.name)) {
            report(
              scope,
              `validateTargetsInApp: namespace ${ns.name} belongs to app ${ns.app.name}, not to ${[...apps].join(' or ')}`,
            );
          }
        }

        if (t.promotion) {
          const ref: TargetRef = {
            saasFilePath: sf.path,
            resourceTemplate: rt.name,
            url: rt.url,
            target: targetId(sf, rt, t),
          };
          for (const channel of t.promotion.publish ?? []) {
            const publishers = publications.get(channel) ?? new Map<string, TargetRef>();
            if (publishers.has(refKey(ref))) {
              report(scope, `publishes channel ${channel} twice (the same target appears twice)`);
              continue;
            }
            publishers.set(refKey(ref), ref);
            publications.set(channel, publishers);
          }
          for (const channel of t.promotion.subscribe ?? []) {
            subscriptions.set(channel, [...(subscriptions.get(channel) ?? []), ref]);
          }
        }

        const params = t.parameters;
        if (!params || Object.keys(params).length === 0) continue;
        const imageTag = params.IMAGE_TAG;
        if (isTruthy(imageTag) && t.ref.startsWith(pyStr(imageTag))) {
          report(
            scope,
            `IMAGE_TAG ${pyStr(imageTag)} is a prefix of ref ${t.ref}: remove the IMAGE_TAG parameter, it is generated from the commit`,
          );
        }

        const envParams = ns.environment.parameters;
        if (!envParams || Object.keys(envParams).length === 0) continue;
        for (const [key, value] of Object.entries(params)) {
          if (typeof value !== 'string') continue;
          if (value.includes(`\${${key}}`)) {
            report(
              scope,
              `parameter ${key}: "${value}" refers to itself; substitution will not do what you expect, rename the parameter`,
            );
          }
          for (const [envKey, envValue] of Object.entries(envParams)) {
            if (typeof envValue !== 'string' || !envValue.includes('.')) continue;
            if (!value.includes(envValue)) continue;
            const detail =
              key === envKey && value === envValue
                ? `remove ${key}, environment ${ns.environment.name} sets the same value`
                : `parameter ${key}: "${value}" repeats ${envKey}: "${envValue}" of environment ${ns.environment.name}; use "${key}: ${value.replaceAll(envValue, `\${${envKey}}`)}"`;
            report(scope, detail);
          }
        }
      }
    }
  }

  for (const [name, paths] of pathsByName) {
    if (paths.length > 1)
      report(`saas file ${name}`, `the name is not unique: ${paths.join(', ')}`);
  }

  for (const [channel, subscribers] of subscriptions) {
    const publishers = [...(publications.get(channel)?.values() ?? [])];
    for (const sub of subscribers) {
      const scope = `saas file ${sub.saasFilePath}, resource template ${sub.resourceTemplate}`;
      if (publishers.length === 0) {
        report(scope, `subscribes to channel ${channel}, which no target publishes`);
      }
      for (const pub of publishers) {
        if (pub.url !== sub.url) {
          report(
            scope,
            `subscribes to channel ${channel} from a different repository: publisher ${pub.saasFilePath} resource template ${pub.resourceTemplate} deploys ${pub.url}, this one ${sub.url}`,
          );
        }
      }
    }
  }

  const repoUrls = new Set(saasFiles.flatMap((sf) => sf.resourceTemplates.map((rt) => rt.url)));
  for (const url of repoUrls) {
    if (!context.codeComponentUrls.has(url)) {
      const users = saasFiles
        .filter((sf) => sf.resourceTemplates.some((rt) => rt.url === url))
        .map((sf) => sf.name);
      report(
        `saas file ${users.join(', ')}`,
        `repository ${url} is not a codeComponents url of any app`,
      );
    }
  }

  const quayOrgs = new Set(context.quayOrgs.map((o) => `${o.instanceUrl}/${o.name}`));
  const patterns = new Set(saasFiles.flatMap((sf) => sf.imagePatterns));
  for (const pattern of patterns) {
    const parts = pattern.split('/');
    const [host, org] = parts;
    if (host === undefined || org === undefined || !context.quayInstanceUrls.has(host)) continue;
    if (!quayOrgs.has(`${host}/${org}`)) {
      const users = saasFiles
        .filter((sf) => sf.imagePatterns.includes(pattern))
        .map((sf) => sf.name);
      report(
        `saas file ${users.join(', ')}`,
        `image pattern ${pattern} names Quay organisation ${org} of ${host}, which no quayOrg of app-interface is`,
      );
    }
  }

  return problems;
}

/** Python truthiness of a JSON value. */
function isTruthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** Python's `str()` of a JSON scalar, as the original compares IMAGE_TAG with the ref. */
function pyStr(v: unknown): string {
  if (v === true) return 'True';
  if (v === false) return 'False';
  return typeof v === 'string' ? v : JSON.stringify(v);
}
