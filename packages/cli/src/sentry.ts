import { type ErrorRecord, onErrorRecords, type SecretRedactor } from '@qontract/core';

/** What SENTRY_EVENT_LEVEL accepts, as the original: the lowest log level that becomes an event. */
const EVENT_LEVELS = ['CRITICAL', 'ERROR'] as const;
type EventLevel = (typeof EVENT_LEVELS)[number];

/** Sentry's name of each log level that can become an event. */
const SEVERITY = { ERROR: 'error', CRITICAL: 'fatal' } as const;

export interface SentryReporting {
  /** Sends what is queued (within `timeoutMs`) and stops reporting. */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * The SENTRY_EVENT_LEVEL setting: CRITICAL when unset. Anything but CRITICAL
 * or ERROR (any case) is refused, as the original refuses it at start-up.
 */
export function sentryEventLevel(value: string | undefined): EventLevel {
  const level = (value?.trim() || 'CRITICAL').toUpperCase();
  if (!(EVENT_LEVELS as readonly string[]).includes(level)) {
    throw new Error(`SENTRY_EVENT_LEVEL must be CRITICAL or ERROR, got '${value}'`);
  }
  return level as EventLevel;
}

/**
 * An event (or breadcrumb) with every secret value the run has read masked:
 * the redactor knows each value, its base64 and its JSON-escaped form, so the
 * serialised event is masked whole, wherever Sentry put the text (message,
 * exception values, breadcrumbs, extra data).
 */
export function scrubbed<T>(value: T, redactor: SecretRedactor): T {
  return JSON.parse(redactor.redact(JSON.stringify(value))) as T;
}

/**
 * Starts reporting to Sentry when SENTRY_DSN is set, as the original's CLI
 * does with sentry-sdk: each log record at SENTRY_EVENT_LEVEL or above becomes
 * an event (with the logged error's stack when there is one), and so does an
 * uncaught exception. `redactor` is the run's: every event passes through it
 * before it leaves the process. Undefined without SENTRY_DSN; throws on a bad
 * SENTRY_EVENT_LEVEL.
 */
export async function startSentry(
  env: Readonly<Record<string, string | undefined>>,
  redactor: SecretRedactor,
): Promise<SentryReporting | undefined> {
  const dsn = env.SENTRY_DSN?.trim();
  if (!dsn) return undefined;
  const threshold = sentryEventLevel(env.SENTRY_EVENT_LEVEL);
  // Loaded only when reporting is on: the SDK is large, and most runs have no DSN.
  const Sentry = await import('@sentry/node');
  Sentry.init({
    dsn,
    // Errors only, as the original: no tracing, no performance instrumentation.
    defaultIntegrations: Sentry.getDefaultIntegrationsWithoutPerformance(),
    beforeSend: (event) => scrubbed(event, redactor),
    beforeBreadcrumb: (crumb) => scrubbed(crumb, redactor),
  });
  const report = (record: ErrorRecord) => {
    if (threshold === 'CRITICAL' && record.level !== 'CRITICAL') return;
    Sentry.withScope((scope) => {
      scope.setLevel(SEVERITY[record.level]);
      if (record.integration) scope.setTag('integration', record.integration);
      if (record.err) {
        scope.setExtra('log_message', record.msg);
        scope.captureException(record.err);
      } else {
        scope.captureMessage(record.msg, SEVERITY[record.level]);
      }
    });
  };
  const stopListening = onErrorRecords(report);
  return {
    async close(timeoutMs = 2000) {
      stopListening();
      await Sentry.close(timeoutMs);
    },
  };
}
