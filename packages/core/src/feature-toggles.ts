/** One toggle of Unleash's client API (`GET <UNLEASH_API_URL>/client/features`). */
interface UnleashFeature {
  readonly name: string;
  readonly enabled: boolean;
  readonly strategies?: ReadonlyArray<{
    readonly name: string;
    readonly parameters?: Record<string, string>;
  }>;
}

export interface FeatureToggles {
  /** The original's `get_feature_toggle_state(name, context, default)`. */
  isEnabled(
    name: string,
    context?: { cluster_name?: string },
    fallback?: boolean,
  ): Promise<boolean>;
}

/**
 * Unleash feature toggles as the original reads them. Without
 * `UNLEASH_API_URL` and `UNLEASH_CLIENT_ACCESS_TOKEN` every toggle is enabled
 * (whatever the fallback, as upstream). With them, the features are fetched
 * once; a missing feature takes the fallback; an enabled feature is on when
 * one of its strategies is: `default`, and the original's custom
 * `enableCluster` / `disableCluster` (comma-separated `cluster_name` lists).
 */
export function unleashToggles(
  env: Readonly<Record<string, string | undefined>>,
  fetchImpl: typeof fetch = fetch,
): FeatureToggles {
  const url = env.UNLEASH_API_URL;
  const token = env.UNLEASH_CLIENT_ACCESS_TOKEN;
  if (!url || !token) return { isEnabled: async () => true };
  let features: Promise<Map<string, UnleashFeature>> | undefined;
  const load = () => {
    features ??= (async () => {
      const response = await fetchImpl(`${url.replace(/\/+$/, '')}/client/features`, {
        headers: { Authorization: token, 'UNLEASH-APPNAME': 'qontract-reconcile' },
        signal: AbortSignal.timeout(10_000),
      });
      if (!response.ok) throw new Error(`Unleash answered HTTP ${response.status}`);
      const body = (await response.json()) as { features?: UnleashFeature[] };
      return new Map((body.features ?? []).map((f) => [f.name, f]));
    })();
    return features;
  };
  return {
    async isEnabled(name, context = {}, fallback = true) {
      let feature: UnleashFeature | undefined;
      try {
        feature = (await load()).get(name);
      } catch {
        // Unleash unreachable: the fallback, as UnleashClient answers without a cache.
        return fallback;
      }
      if (!feature) return fallback;
      if (!feature.enabled) return false;
      const strategies = feature.strategies?.length ? feature.strategies : [{ name: 'default' }];
      return strategies.some((s) => strategyOn(s, context));
    },
  };
}

function strategyOn(
  strategy: { readonly name: string; readonly parameters?: Record<string, string> },
  context: { cluster_name?: string },
): boolean {
  const clusters = (strategy.parameters?.cluster_name ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  switch (strategy.name) {
    case 'default':
      return true;
    case 'enableCluster':
      return context.cluster_name !== undefined && clusters.includes(context.cluster_name);
    case 'disableCluster':
      return context.cluster_name === undefined || !clusters.includes(context.cluster_name);
    default:
      return false;
  }
}
