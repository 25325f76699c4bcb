/** The first of `patterns` that prefixes `image` (the original's `imagePatterns` rule), if any. */
export function matchingImagePattern(
  image: string,
  patterns: readonly string[],
): string | undefined {
  return patterns.find((p) => image.startsWith(p));
}

/** An `imagePatternsBlockRules` entry of the app-interface settings. */
export interface ImagePatternsBlockRule {
  readonly environmentLabelSelector: Readonly<Record<string, unknown>>;
  readonly imagePatterns: readonly string[];
}

/**
 * The images a block rule forbids in an environment: none unless the
 * environment has labels and carries every label of the rule's selector;
 * then every image some pattern of the rule prefixes.
 */
export function blockedImages(
  rule: ImagePatternsBlockRule,
  environmentLabels: Readonly<Record<string, unknown>> | null | undefined,
  images: Iterable<string>,
): string[] {
  if (!environmentLabels || Object.keys(environmentLabels).length === 0) return [];
  const selects = Object.entries(rule.environmentLabelSelector).every(
    ([k, v]) => Object.hasOwn(environmentLabels, k) && environmentLabels[k] === v,
  );
  if (!selects) return [];
  return [...images].filter((i) => matchingImagePattern(i, rule.imagePatterns) !== undefined);
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
const list = (v: unknown): unknown[] | undefined => (Array.isArray(v) ? v : undefined);

/**
 * The images of a resource the original validates: pod template containers
 * and init containers, CronJob job template containers, `spec.image`
 * (CatalogSource) and ClowdApp `deployments[]`/`jobs[]` `podSpec.image`.
 */
export function collectImages(resource: unknown): Set<string> {
  const images = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === 'string') images.add(v);
  };
  const spec = obj(obj(resource)?.spec);
  if (!spec) return images;
  const podSpec = obj(obj(spec.template)?.spec);
  for (const c of list(podSpec?.containers) ?? []) add(obj(c)?.image);
  for (const c of list(podSpec?.initContainers) ?? []) add(obj(c)?.image);
  const jobPodSpec = obj(obj(obj(obj(spec.jobTemplate)?.spec)?.template)?.spec);
  for (const c of list(jobPodSpec?.containers) ?? []) add(obj(c)?.image);
  add(spec.image);
  for (const d of list(spec.deployments) ?? []) add(obj(obj(d)?.podSpec)?.image);
  for (const j of list(spec.jobs) ?? []) add(obj(obj(j)?.podSpec)?.image);
  return images;
}
