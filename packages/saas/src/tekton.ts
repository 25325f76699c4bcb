import { QontractError } from '@qontract/core';

/**
 * The names of the Tekton objects of the CD family, as the original's
 * `openshift_tekton_resources` builds them: the trigger integrations name the
 * Pipeline they start with the same rules, so both must agree to the byte.
 */

/** A single character: every object name carries it (`o-<template>-<saas file>`). */
const OBJECTS_PREFIX = 'o';
/** Kubernetes' limit for an object name. */
const RESOURCE_MAX_LENGTH = 63;
/** A PipelineRun created on retry is named `<pipeline>-<7 random characters>`. */
const PIPELINE_MAX_LENGTH = RESOURCE_MAX_LENGTH - 7;

/** A Tekton object name over the limit (the original's `OpenshiftTektonResourcesNameTooLongError`). */
export class TektonNameTooLongError extends QontractError {}

function checked(name: string, limit: number, what: string): string {
  if (name.length > limit) {
    throw new TektonNameTooLongError(`${what} name ${name} is longer than ${limit} characters`);
  }
  return name;
}

/** A `onePerNamespace` Task: `o-<template>`, at most 63 characters. */
export function tektonNamespaceObjectName(templateName: string): string {
  return checked(`${OBJECTS_PREFIX}-${templateName}`, RESOURCE_MAX_LENGTH, 'Resource');
}

/** A `onePerSaasFile` Task: `o-<template>-<saas file>`, at most 63 characters. */
export function tektonSaasFileTaskName(templateName: string, saasFileName: string): string {
  return checked(
    `${OBJECTS_PREFIX}-${templateName}-${saasFileName}`,
    RESOURCE_MAX_LENGTH,
    'Resource',
  );
}

/**
 * The Pipeline of a saas file: `o-<template>-<saas file>`, at most 56
 * characters so that the PipelineRuns Tekton names after it on retry fit.
 */
export function tektonPipelineName(templateName: string, saasFileName: string): string {
  return checked(
    `${OBJECTS_PREFIX}-${templateName}-${saasFileName}`,
    PIPELINE_MAX_LENGTH,
    'Pipeline',
  );
}

/** A duration the original's `parse_dhms_duration` refuses. */
export class BadDurationError extends QontractError {}

const UNIT_SECONDS: Readonly<Record<string, number>> = { d: 86_400, h: 3_600, m: 60, s: 1 };

/**
 * Seconds of a `1d2h3m4s`-style duration (days to seconds, each unit after its
 * number, units in any order and repeatable, as the original's `dhms_to_seconds`).
 */
export function dhmsToSeconds(duration: string): number {
  if (!/^\d/.test(duration)) throw new BadDurationError(`Invalid time duration ${duration}`);
  let total = 0;
  for (const part of duration.matchAll(/(\d*)(\D|$)/g)) {
    const [whole, digits, unit] = part;
    if (whole === '') break;
    if (unit === '' || unit === undefined)
      throw new BadDurationError(`Invalid time duration ${duration}`);
    const factor = UNIT_SECONDS[unit];
    if (factor === undefined) {
      throw new BadDurationError(`Invalid unit ${unit} in time duration ${duration}`);
    }
    if (digits === '') throw new BadDurationError(`Invalid time duration ${duration}`);
    total += Number(digits) * factor;
  }
  return total;
}

/** `3723` → `1h2m3s`, `62` → `1m2s`, `5` → `5s` (the original's `seconds_to_hms`). */
export function secondsToHms(seconds: number): string {
  const minutes = Math.floor(seconds / 60);
  const s = seconds % 60;
  if (minutes === 0) return `${s}s`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h === 0 ? `${m}m${s}s` : `${h}h${m}m${s}s`;
}
