/**
 * Which saas targets a merge request touches (the original's
 * `openshift-saas-deploy-change-tester`): every target of the head bundle's
 * saas files is compared with the same target of the base bundle's, and each
 * (saas file, environment) with an added, removed or changed target is what
 * the MR check dry-runs `openshift-saas-deploy` for.
 */
import { compareCodePoints, pyJsonDumps } from '@qontract/pycompat';
import type { SaasFile, SaasResourceTemplate, SaasTarget } from './model.ts';
import { targetConfigState } from './promotions.ts';

/** One target an MR adds, removes or changes. */
export interface SaasTargetChange {
  readonly change: 'added' | 'removed' | 'changed';
  readonly resourceTemplate: string;
  /** The target's `name`, when it has one. */
  readonly target: string | null;
  readonly cluster: string;
  readonly namespace: string;
  /**
   * What differs, for a changed target: the names of its state's fields
   * (`ref`, `parameters`, `rt_parameters`, `saas_file_parameters`,
   * `secretParameters`, `promotion`, `images`, `disable`, `delete`, ...).
   */
  readonly fields: readonly string[];
  /** The target's ref in BASE (null when added) and HEAD (null when removed). */
  readonly ref: { readonly base: string | null; readonly head: string | null };
  /** `<repo url>/compare/<base ref>...<head ref>` when a kept target's ref changed. */
  readonly compareUrl: string | null;
}

/** A (saas file, environment) whose targets an MR touches. */
export interface SaasEnvironmentChange {
  readonly saasFile: string;
  /** The saas file's path in the bundle (HEAD's, or BASE's when removed). */
  readonly saasFilePath: string;
  readonly environment: string;
  readonly targets: readonly SaasTargetChange[];
  /** The compare links of the targets whose ref changed, without repeats. */
  readonly compareUrls: readonly string[];
  /**
   * Whether HEAD still has the saas file with a target in this environment.
   * When not, `openshift-saas-deploy --saas-file-name --env-name` finds no
   * saas file: there is nothing to dry-run.
   */
  readonly inHead: boolean;
}

interface TargetEntry {
  readonly saasFile: SaasFile;
  readonly resourceTemplate: SaasResourceTemplate;
  readonly target: SaasTarget;
  readonly state: Record<string, string>;
}

/**
 * What the comparison looks at for one target: its config state (the
 * target config hash's input: ref, parameters of the target, resource
 * template and saas file, secret parameter refs, promotion, images, upstream,
 * SLOs, disable/delete, namespace, url and path, managed types and names)
 * plus what only the change tester's state holds (the saas file's path,
 * deploy resources, image patterns, channel image tags, the target's own
 * file and environment). Each field as canonical JSON, so that key order
 * never counts as a change.
 */
function targetState(
  saasFile: SaasFile,
  resourceTemplate: SaasResourceTemplate,
  target: SaasTarget,
): Record<string, string> {
  const fields: Record<string, unknown> = {
    ...targetConfigState(saasFile, resourceTemplate, target),
    saas_file_path: saasFile.path,
    deploy_resources: saasFile.deployResources,
    image_patterns: saasFile.imagePatterns,
    use_channel_in_image_tag: saasFile.use_channel_in_image_tag ?? false,
    target_path: target.path,
    environment: target.namespace.environment.name,
  };
  return Object.fromEntries(
    Object.entries(fields).map(([k, v]) => [k, pyJsonDumps(v ?? null, { sortKeys: true })]),
  );
}

/**
 * Every target by its identity (the target uid's parts: saas file, resource
 * template, target name, cluster, namespace). A repeated identity, which
 * saas-file-validator refuses, gets a counter so that nothing is lost.
 */
function targetsOf(saasFiles: readonly SaasFile[]): Map<string, TargetEntry> {
  const out = new Map<string, TargetEntry>();
  for (const saasFile of saasFiles) {
    for (const resourceTemplate of saasFile.resourceTemplates) {
      for (const target of resourceTemplate.targets) {
        const id = JSON.stringify([
          saasFile.name,
          resourceTemplate.name,
          target.name ?? '',
          target.namespace.cluster.name,
          target.namespace.name,
        ]);
        let key = id;
        for (let n = 2; out.has(key); n++) key = `${id}#${n}`;
        out.set(key, {
          saasFile,
          resourceTemplate,
          target,
          state: targetState(saasFile, resourceTemplate, target),
        });
      }
    }
  }
  return out;
}

function changeOf(
  entry: TargetEntry,
  change: SaasTargetChange['change'],
  rest: Pick<SaasTargetChange, 'fields' | 'ref' | 'compareUrl'>,
): SaasTargetChange {
  return {
    change,
    resourceTemplate: entry.resourceTemplate.name,
    target: entry.target.name ?? null,
    cluster: entry.target.namespace.cluster.name,
    namespace: entry.target.namespace.name,
    ...rest,
  };
}

/**
 * The (saas file, environment) pairs whose targets differ between the saas
 * files of BASE and HEAD (selectors resolved, templates rendered, as
 * `loadSaasFiles` returns them), sorted by saas file and environment, each
 * with its added, removed and changed targets and the compare links of its
 * changed refs.
 *
 * The original dry-runs the pairs of HEAD's targets whose state is not in
 * BASE: here a removed target counts too (its pair is dry-run when HEAD still
 * deploys the saas file there), and the state also holds the target config
 * hash's fields (promotion, images, SLOs, ...), so a change of those is
 * dry-run as well.
 */
export function changedSaasTargets(
  base: readonly SaasFile[],
  head: readonly SaasFile[],
): SaasEnvironmentChange[] {
  const before = targetsOf(base);
  const after = targetsOf(head);
  const pairs = new Map<
    string,
    { saasFile: string; saasFilePath: string; environment: string; targets: SaasTargetChange[] }
  >();
  const add = (entry: TargetEntry, change: SaasTargetChange) => {
    const environment = entry.target.namespace.environment.name;
    const key = JSON.stringify([entry.saasFile.name, environment]);
    const pair = pairs.get(key) ?? {
      saasFile: entry.saasFile.name,
      saasFilePath: entry.saasFile.path,
      environment,
      targets: [],
    };
    pair.targets.push(change);
    pairs.set(key, pair);
  };

  for (const [key, now] of after) {
    const then = before.get(key);
    const ref = { base: then?.target.ref ?? null, head: now.target.ref };
    if (!then) {
      add(now, changeOf(now, 'added', { fields: [], ref, compareUrl: null }));
      continue;
    }
    const names = new Set([...Object.keys(then.state), ...Object.keys(now.state)]);
    const fields = [...names].filter((f) => then.state[f] !== now.state[f]);
    if (fields.length === 0) continue;
    const compareUrl =
      then.target.ref !== now.target.ref
        ? `${now.resourceTemplate.url}/compare/${then.target.ref}...${now.target.ref}`
        : null;
    // A target that moved to another environment leaves the old one too.
    if (then.target.namespace.environment.name !== now.target.namespace.environment.name) {
      add(
        then,
        changeOf(then, 'removed', { fields: [], ref: { ...ref, head: null }, compareUrl: null }),
      );
    }
    add(now, changeOf(now, 'changed', { fields, ref, compareUrl }));
  }
  for (const [key, then] of before) {
    if (after.has(key)) continue;
    add(
      then,
      changeOf(then, 'removed', {
        fields: [],
        ref: { base: then.target.ref, head: null },
        compareUrl: null,
      }),
    );
  }

  const deployed = new Set(
    head.flatMap((sf) =>
      sf.resourceTemplates.flatMap((rt) =>
        rt.targets.map((t) => JSON.stringify([sf.name, t.namespace.environment.name])),
      ),
    ),
  );
  return [...pairs.entries()]
    .map(([key, p]) => ({
      ...p,
      compareUrls: [...new Set(p.targets.flatMap((t) => (t.compareUrl ? [t.compareUrl] : [])))],
      inHead: deployed.has(key),
    }))
    .sort(
      (a, b) =>
        compareCodePoints(a.saasFile, b.saasFile) ||
        compareCodePoints(a.environment, b.environment),
    );
}
