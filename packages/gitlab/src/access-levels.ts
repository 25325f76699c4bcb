import { QontractError } from '@qontract/core';

/** GitLab's access levels by the names app-interface uses (`gitlab_api.get_access_level`). */
export const ACCESS_LEVELS: Readonly<
  Record<'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner', number>
> = Object.freeze({
  guest: 10,
  reporter: 20,
  developer: 30,
  maintainer: 40,
  owner: 50,
});

/** The level of a name (case-insensitive, as the original); unknown names are an error. */
export function accessLevel(name: string): number {
  const key = name.toLowerCase();
  const level = Object.hasOwn(ACCESS_LEVELS, key)
    ? (ACCESS_LEVELS as Readonly<Record<string, number>>)[key]
    : undefined;
  if (level === undefined) {
    throw new QontractError(`invalid GitLab access level: ${name}`);
  }
  return level;
}

/** Levels GitLab reports but app-interface never grants (python-gitlab's `AccessLevel` names). */
const OTHER_LEVEL_NAMES: Readonly<Record<number, string>> = {
  0: 'no_access',
  5: 'minimal_access',
  15: 'planner',
  60: 'admin',
};

/** The lower-case name of a level (30 → `developer`), as the original's `get_access_level_string`. */
export function accessLevelName(level: number): string {
  const entry = Object.entries(ACCESS_LEVELS).find(([, value]) => value === level);
  const name = entry?.[0] ?? OTHER_LEVEL_NAMES[level];
  if (name === undefined) throw new QontractError(`invalid GitLab access level: ${level}`);
  return name;
}
