import { QontractError } from '@qontract/core';
import { AppInterfaceSettingsDocument } from './queries/app-interface-settings.generated.ts';
import { ResourceDocument } from './queries/resource.generated.ts';
import type { GqlClient } from './types.ts';

export interface AppInterfaceResource {
  readonly path: string;
  readonly content: string;
  readonly sha256sum: string;
}

/** One resource file by path (`resources_v1(path:)`), without schema validation; exactly one must exist. */
export async function getResource(gql: GqlClient, path: string): Promise<AppInterfaceResource> {
  const { resources } = await gql.query(ResourceDocument, { path }, { skipValidation: true });
  const found = resources.filter((r): r is AppInterfaceResource => r !== null);
  if (found.length !== 1) {
    throw new QontractError(
      `expected exactly one resource at ${path} in app-interface, found ${found.length}`,
    );
  }
  return found[0]!;
}

export interface AppInterfaceSettings {
  /** Secrets come from Vault when true, from config.toml otherwise. */
  readonly vault: boolean;
  readonly repoUrl: string | undefined;
  readonly kubeBinary: string | undefined;
  readonly hashLength: number | undefined;
}

/** The settings each client (one per run) was answered, or is being answered. */
const settingsOf = new WeakMap<GqlClient, Promise<AppInterfaceSettings>>();

/**
 * The `app_interface_settings_v1` datafile. Without one, secrets come from
 * config.toml, as the original's `SecretReader(settings=None)` does. Asked
 * once per client: a run reads the settings in several places (its secrets,
 * its integration), and a later query would wait behind the run's large ones
 * at a server that answers in turn.
 */
export function appInterfaceSettings(gql: GqlClient): Promise<AppInterfaceSettings> {
  let settings = settingsOf.get(gql);
  if (!settings) {
    settings = readSettings(gql);
    settingsOf.set(gql, settings);
    settings.catch(() => settingsOf.delete(gql));
  }
  return settings;
}

async function readSettings(gql: GqlClient): Promise<AppInterfaceSettings> {
  const { settings } = await gql.query(AppInterfaceSettingsDocument);
  const first = settings?.[0];
  if (!first) {
    return { vault: false, repoUrl: undefined, kubeBinary: undefined, hashLength: undefined };
  }
  return {
    vault: first.vault,
    repoUrl: first.repoUrl,
    kubeBinary: first.kubeBinary,
    hashLength: first.hashLength,
  };
}

/**
 * A `JSON` field's value: qontract-server sends JSON fields as JSON text
 * (`labels: "{\"team\":\"x\"}"`); null and absent stay null.
 */
export function parseJsonScalar(text: string | null | undefined): unknown {
  return text === null || text === undefined ? null : JSON.parse(text);
}
