import { format as formatMessage } from 'node:util';
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

/** A second copy of every line, in the original's `LOG_FILE` shape (run-integration). */
export interface LogFile {
  write(line: string): unknown;
  /** `PREFIX_LOG_LEVEL=true`: `[ERROR] message`, which the pod's fluentd error filters match. */
  readonly prefixLevel: boolean;
}

export interface LoggerSettings {
  level?: LogLevelName | undefined;
  /** `text` is the original's line format; default: text on a TTY, JSON otherwise. */
  format?: LogFormat | undefined;
  dryRun: boolean;
  integration?: string | undefined;
  redactor: SecretRedactor;
  /** Where lines go; default stderr, like the original's `logging.basicConfig`. */
  destination?: { write(line: string): unknown; isTTY?: boolean } | undefined;
  logFile?: LogFile | undefined;
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

/** A record logged at ERROR or CRITICAL, as a listener of onErrorRecords hears it. */
export interface ErrorRecord {
  readonly level: 'ERROR' | 'CRITICAL';
  /** The message, with its printf-style arguments applied (not yet redacted). */
  readonly msg: string;
  /** The error logged with it (`log.error(err)` or `log.error({ err }, msg)`), if any. */
  readonly err?: Error;
  readonly integration?: string;
}

let errorListener: ((record: ErrorRecord) => void) | undefined;

/**
 * Hears every ERROR and CRITICAL record of every logger of the process (Sentry
 * does, when SENTRY_DSN is set), as a handler on Python's root logger would.
 * One listener per process; returns what removes it.
 */
export function onErrorRecords(listener: (record: ErrorRecord) => void): () => void {
  errorListener = listener;
  return () => {
    if (errorListener === listener) errorListener = undefined;
  };
}

function errorRecordOf(args: unknown[], level: number, integration?: string): ErrorRecord {
  const [first, ...rest] = args;
  let err: Error | undefined;
  let parts = args;
  if (first instanceof Error) {
    err = first;
    parts = rest.length > 0 ? rest : [first.message];
  } else if (first !== null && typeof first === 'object') {
    const inner = (first as { err?: unknown }).err;
    if (inner instanceof Error) err = inner;
    parts = rest;
  }
  return {
    level: level >= 60 ? 'CRITICAL' : 'ERROR',
    msg: formatMessage(...parts),
    ...(err ? { err } : {}),
    ...(integration ? { integration } : {}),
  };
}

/**
 * Creates the run's logger. Every line passes through the secret redactor
 * after serialisation, so a secret can't leak through a message or an error.
 */
export function createLogger(settings: LoggerSettings): Logger {
  const out = settings.destination ?? process.stderr;
  const format = settings.format ?? (out.isTTY ? 'text' : 'json');
  const redactor = settings.redactor;
  const file = settings.logFile;
  const stream: DestinationStream = {
    write(line: string) {
      const safe = redactor.redact(line);
      out.write(format === 'text' ? formatTextLine(safe, settings.dryRun) : safe);
      file?.write(formatFileLine(safe, file.prefixLevel));
    },
  };
  const options: LoggerOptions = {
    level: PINO_LEVEL[settings.level ?? 'INFO'],
    base: settings.integration ? { integration: settings.integration } : {},
    redact: { paths: REDACT_PATHS, censor: SecretRedactor.MASK },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      bindings: (b) => b,
      // The number stays (code and tests compare it); the name is what log filters match.
      level: (_label, number) => ({ level: number, levelname: PYTHON_LEVEL[number] ?? 'NOTSET' }),
    },
    ...(settings.dryRun ? { mixin: () => ({ dry_run: true }) } : {}),
    hooks: {
      logMethod(args, method, level) {
        if (level >= 50 && errorListener) {
          errorListener(errorRecordOf(args, level, settings.integration));
        }
        method.apply(this, args);
      },
    },
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
  const { time, integration, ...rest } = rec;
  const ts = typeof time === 'string' ? time.replace('T', ' ').replace(/\.\d+Z$/, '') : '';
  const parts = [`[${ts}]`, `[${levelNameOf(rec)}]`];
  if (dryRun) parts.push('[DRY-RUN]');
  if (integration) parts.push(`[${String(integration)}]`);
  return `${parts.join(' ')} - ${messageOf(rest)}\n`;
}

/**
 * The original's `LOG_FILE` line: the message alone (`%(message)s`), or
 * `[LEVEL] message` with PREFIX_LOG_LEVEL; no time or integration, which the
 * fluentd sidecar adds itself.
 */
function formatFileLine(jsonLine: string, prefixLevel: boolean): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const { time: _t, integration: _i, ...rest } = rec;
  return `${prefixLevel ? `[${levelNameOf(rec)}] ` : ''}${messageOf(rest)}\n`;
}

function levelNameOf(rec: Record<string, unknown>): string {
  return typeof rec.levelname === 'string'
    ? rec.levelname
    : (PYTHON_LEVEL[Number(rec.level)] ?? String(rec.level));
}

/** The message, any extra fields as `key=value`, then an error's stack on the next lines. */
function messageOf(rec: Record<string, unknown>): string {
  const { level: _l, levelname: _n, msg, dry_run: _d, err, pid: _p, hostname: _h, ...extras } = rec;
  let text = msg === undefined ? '' : String(msg);
  const fields = Object.entries(extras);
  if (fields.length) {
    text += ` ${fields.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ')}`;
  }
  if (err && typeof err === 'object') {
    const e = err as { message?: string; stack?: string };
    text += `\n${e.stack ?? e.message ?? ''}`;
  }
  return text;
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
