import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import { SecretRedactor } from './redaction.ts';

export type { Logger } from 'pino';

/** The original's level names (`--log-level`), mapped to pino levels. */
export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];
const PINO_LEVEL: Record<LogLevelName, pino.Level> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  ERROR: 'error',
  CRITICAL: 'fatal',
};
const PYTHON_LEVEL: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARNING',
  50: 'ERROR',
  60: 'CRITICAL',
};

export type LogFormat = 'json' | 'text';

export interface LoggerSettings {
  level?: LogLevelName | undefined;
  /** `text` is the original's line format; default: text on a TTY, JSON otherwise. */
  format?: LogFormat | undefined;
  dryRun: boolean;
  integration?: string | undefined;
  redactor: SecretRedactor;
  /** Where lines go; default stderr, like the original's `logging.basicConfig`. */
  destination?: { write(line: string): unknown; isTTY?: boolean } | undefined;
}

/** Keys whose values are never logged, wherever they appear in a log object. */
const REDACT_PATHS = [
  'token',
  'password',
  'secret',
  'secret_id',
  '*.token',
  '*.password',
  '*.secret_id',
  'headers.authorization',
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
];

/**
 * Creates the run's logger. Every line passes through the secret redactor
 * after serialisation, so a secret can't leak through a message or an error.
 */
export function createLogger(settings: LoggerSettings): Logger {
  const out = settings.destination ?? process.stderr;
  const format = settings.format ?? (out.isTTY ? 'text' : 'json');
  const redactor = settings.redactor;
  const stream: DestinationStream = {
    write(line: string) {
      const safe = redactor.redact(line);
      out.write(format === 'text' ? formatTextLine(safe, settings.dryRun) : safe);
    },
  };
  const options: LoggerOptions = {
    level: PINO_LEVEL[settings.level ?? 'INFO'],
    base: settings.integration ? { integration: settings.integration } : {},
    redact: { paths: REDACT_PATHS, censor: SecretRedactor.MASK },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      bindings: (b) => b,
    },
    ...(settings.dryRun ? { mixin: () => ({ dry_run: true }) } : {}),
  };
  return pino(options, stream);
}

/**
 * The original's text shape: `[ts] [LEVEL] [DRY-RUN] [integration] - msg`,
 * with any extra fields appended as `key=value`.
 */
export function formatTextLine(jsonLine: string, dryRun: boolean): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const { time, level, msg, integration, dry_run: _d, err, ...rest } = rec;
  const ts = typeof time === 'string' ? time.replace('T', ' ').replace(/\.\d+Z$/, '') : '';
  const parts = [`[${ts}]`, `[${PYTHON_LEVEL[Number(level)] ?? String(level)}]`];
  if (dryRun) parts.push('[DRY-RUN]');
  if (integration) parts.push(`[${String(integration)}]`);
  let text = `${parts.join(' ')} - ${msg === undefined ? '' : String(msg)}`;
  const extras = Object.entries(rest).filter(([k]) => k !== 'pid' && k !== 'hostname');
  if (extras.length) {
    text += ` ${extras.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ')}`;
  }
  if (err && typeof err === 'object') {
    const e = err as { message?: string; stack?: string };
    text += `\n${e.stack ?? e.message ?? ''}`;
  }
  return `${text}\n`;
}

export function parseLogLevel(value: string | undefined): LogLevelName | undefined {
  if (value === undefined || value === '') return undefined;
  const upper = value.toUpperCase();
  if (upper === 'WARN') return 'WARNING';
  if (upper === 'FATAL') return 'CRITICAL';
  if ((LOG_LEVELS as readonly string[]).includes(upper)) return upper as LogLevelName;
  throw new Error(`invalid log level '${value}': expected one of ${LOG_LEVELS.join(', ')}`);
}

/** A logger that drops everything (tests, helpers run without a context). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
