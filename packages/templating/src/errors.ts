import { QontractError } from '@qontract/core';

/**
 * A template could not be compiled or rendered. The message names the resource
 * path and, when known, the template line, so a tenant can find the mistake in
 * their merge request. A `QontractError` (exit code 1): the runner shows the
 * message without a stack trace.
 */
export class TemplateError extends QontractError {
  readonly path: string;
  readonly line: number | undefined;
  /** The engine's own description of the problem, without path and line. */
  readonly reason: string;

  constructor(path: string, reason: string, line?: number) {
    const where = line === undefined ? path : `${path}, line ${line}`;
    super(`error processing jinja2 template (${where}): ${reason}`);
    this.path = path;
    this.line = line;
    this.reason = reason;
  }
}

/**
 * Internal failure raised while lexing, parsing or evaluating; `renderTemplate`
 * turns it into a `TemplateError`. `kind` mirrors the Jinja2 exception class a
 * Python user would have seen (`UndefinedError`, `TypeError`, ...).
 */
export class RenderFailure extends Error {
  line: number | undefined;
  readonly kind: string;

  constructor(kind: string, message: string, line?: number) {
    super(message);
    this.name = 'RenderFailure';
    this.kind = kind;
    this.line = line;
  }

  describe(): string {
    return `${this.kind}: ${this.message}`;
  }
}

export const failure = {
  assertion: (message: string, line?: number) =>
    new RenderFailure('TemplateAssertionError', message, line),
  syntax: (message: string, line?: number) =>
    new RenderFailure('TemplateSyntaxError', message, line),
  undefined: (message: string) => new RenderFailure('UndefinedError', message),
  type: (message: string) => new RenderFailure('TypeError', message),
  value: (message: string) => new RenderFailure('ValueError', message),
  runtime: (message: string) => new RenderFailure('TemplateRuntimeError', message),
  security: (message: string) => new RenderFailure('SecurityError', message),
  limit: (message: string) => new RenderFailure('LimitExceeded', message),
} as const;
