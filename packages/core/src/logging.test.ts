import { describe, expect, it } from 'vitest';
import { createLogger, formatTextLine, parseLogLevel } from './logging.ts';
import { SecretRedactor } from './redaction.ts';

function capture(isTTY = false) {
  const lines: string[] = [];
  return { lines, destination: { isTTY, write: (s: string) => lines.push(s) } };
}

describe('logging', () => {
  it('writes JSON lines when not on a TTY, with the dry-run marker field', () => {
    const out = capture(false);
    const log = createLogger({
      dryRun: true,
      integration: 'openshift-namespaces',
      redactor: new SecretRedactor(),
      destination: out.destination,
    });
    log.info('hello');
    const rec = JSON.parse(out.lines[0]!);
    expect(rec).toMatchObject({
      msg: 'hello',
      integration: 'openshift-namespaces',
      dry_run: true,
      level: 30,
      levelname: 'INFO',
    });
  });

  it('names every level as the original does, so filters matching ERROR work', () => {
    const out = capture(false);
    const log = createLogger({
      level: 'DEBUG',
      dryRun: false,
      redactor: new SecretRedactor(),
      destination: out.destination,
    });
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    log.fatal('c');
    const records = out.lines.map((l) => JSON.parse(l));
    expect(records.map((r) => [r.level, r.levelname])).toEqual([
      [20, 'DEBUG'],
      [30, 'INFO'],
      [40, 'WARNING'],
      [50, 'ERROR'],
      [60, 'CRITICAL'],
    ]);
    expect(out.lines.filter((l) => l.includes('"ERROR"'))).toHaveLength(1);
  });

  it('copies every line to the log file in the original shape: the message, or [LEVEL] message', () => {
    for (const prefixLevel of [false, true]) {
      const out = capture(false);
      const file: string[] = [];
      const redactor = new SecretRedactor();
      redactor.add('hunter2-secret');
      const log = createLogger({
        dryRun: true,
        integration: 'openshift-groups',
        redactor,
        destination: out.destination,
        logFile: { prefixLevel, write: (l: string) => file.push(l) },
      });
      log.info({ cluster: 'c1' }, 'reconciling');
      log.error({ err: new Error('token hunter2-secret refused') }, 'failed');
      const p = (level: string) => (prefixLevel ? `[${level}] ` : '');
      expect(file[0]).toBe(`${p('INFO')}reconciling cluster=c1\n`);
      // The stack follows on its own lines, as Python's formatter appends a traceback.
      expect(file[1]).toContain(`${p('ERROR')}failed\nError: token *** refused\n    at `);
      expect(file[1]!.startsWith(p('ERROR') || 'failed')).toBe(true);
      expect(file.join('')).not.toContain('hunter2');
      // The stream keeps its own format.
      expect(JSON.parse(out.lines[0]!)).toMatchObject({ msg: 'reconciling', cluster: 'c1' });
    }
  });

  it('writes the original text shape on a TTY, with [DRY-RUN]', () => {
    const out = capture(true);
    const log = createLogger({
      dryRun: true,
      integration: 'openshift-groups',
      redactor: new SecretRedactor(),
      destination: out.destination,
    });
    log.warn("['apply', 'privileged=False', 'c1', 'ns', 'ConfigMap', 'cm']");
    expect(out.lines[0]).toMatch(
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] \[WARNING\] \[DRY-RUN\] \[openshift-groups\] - \['apply', 'privileged=False', 'c1', 'ns', 'ConfigMap', 'cm'\]\n$/,
    );
  });

  it('has no [DRY-RUN] marker in a wet run', () => {
    const out = capture(true);
    createLogger({
      dryRun: false,
      redactor: new SecretRedactor(),
      destination: out.destination,
    }).info('x');
    expect(out.lines[0]).not.toContain('DRY-RUN');
    expect(out.lines[0]).toContain('[INFO] - x');
  });

  it('honours the level', () => {
    const out = capture();
    const log = createLogger({
      level: 'WARNING',
      dryRun: false,
      redactor: new SecretRedactor(),
      destination: out.destination,
    });
    log.info('hidden');
    log.debug('hidden');
    log.error('shown');
    expect(out.lines).toHaveLength(1);
  });

  it('never prints a registered secret, in messages, fields, errors or encodings', () => {
    const out = capture();
    const redactor = new SecretRedactor();
    const log = createLogger({ dryRun: false, redactor, destination: out.destination });
    const secret = 'sha256~S3cr3t-t0ken"with\\quotes';
    redactor.add(secret);
    log.info(`token is ${secret}`);
    log.info({ detail: { value: secret } }, 'in a field');
    log.info(`base64: ${Buffer.from(secret).toString('base64')}`);
    log.error({ err: new Error(`auth failed for ${secret}`) }, 'boom');
    const text = out.lines.join('');
    expect(text).not.toContain('S3cr3t');
    expect(text).not.toContain(Buffer.from(secret).toString('base64'));
    expect(text.match(/\*\*\*/g)?.length).toBeGreaterThanOrEqual(4);
  });

  it('masks well-known secret keys even when the value was never registered', () => {
    const out = capture();
    const log = createLogger({
      dryRun: false,
      redactor: new SecretRedactor(),
      destination: out.destination,
    });
    log.info({ token: 'abcdef', headers: { authorization: 'Bearer xyz123' } }, 'request');
    const rec = JSON.parse(out.lines[0]!);
    expect(rec.token).toBe('***');
    expect(rec.headers.authorization).toBe('***');
  });

  it('does not mask very short values that would mangle ordinary text', () => {
    const redactor = new SecretRedactor();
    redactor.add('ab');
    expect(redactor.redact('about a cab')).toBe('about a cab');
  });

  it('masks the longest secret first', () => {
    const redactor = new SecretRedactor();
    redactor.add('abcd');
    redactor.add('abcdefgh');
    expect(redactor.redact('x abcdefgh y abcd')).toBe('x *** y ***');
  });

  it('parses the original level names', () => {
    expect(parseLogLevel('debug')).toBe('DEBUG');
    expect(parseLogLevel('WARN')).toBe('WARNING');
    expect(parseLogLevel(undefined)).toBeUndefined();
    expect(() => parseLogLevel('LOUD')).toThrow(/invalid log level 'LOUD'/);
  });

  it('formats extra fields after the message', () => {
    const line = formatTextLine(
      JSON.stringify({ time: '2026-01-02T03:04:05.678Z', level: 50, msg: 'm', scope: 'c1' }),
      false,
    );
    expect(line).toBe('[2026-01-02 03:04:05] [ERROR] - m scope=c1\n');
    const named = formatTextLine(
      JSON.stringify({
        time: '2026-01-02T03:04:05.678Z',
        level: 40,
        levelname: 'WARNING',
        msg: 'm',
      }),
      false,
    );
    expect(named).toBe('[2026-01-02 03:04:05] [WARNING] - m\n');
  });
});
