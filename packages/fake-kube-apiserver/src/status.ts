import { qualifiedResource, type ResourceType } from './catalogue.ts';

interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
  type?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** A `metav1.Status` failure with its HTTP code, thrown by the handlers and sent as the body. */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): Record<string, unknown> {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      ...(this.reason ? { reason: this.reason } : {}),
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

type Res = Pick<ResourceType, 'group' | 'plural'>;

function details(type: Res, name: string): StatusDetails {
  return type.group === ''
    ? { name, kind: type.plural }
    : { name, group: type.group, kind: type.plural };
}

export function notFound(type: Res, name: string): ApiError {
  return new ApiError(
    404,
    'NotFound',
    `${qualifiedResource(type)} "${name}" not found`,
    details(type, name),
  );
}

export function alreadyExists(type: Res, name: string): ApiError {
  return new ApiError(
    409,
    'AlreadyExists',
    `${qualifiedResource(type)} "${name}" already exists`,
    details(type, name),
  );
}

export function conflict(type: Res, name: string, why: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": ${why}`,
    details(type, name),
  );
}

export const STALE_OBJECT =
  'the object has been modified; please apply your changes to the latest version and try again';

export interface FieldError {
  /** `FieldValueInvalid`, `FieldValueForbidden`, `FieldValueRequired`, ... */
  readonly type: string;
  readonly field: string;
  /** The detail as the real server words it, without the field prefix. */
  readonly detail: string;
}

/** 422 as `field.ErrorList.ToAggregate()` renders it: one error bare, several in brackets. */
export function invalid(type: ResourceType, name: string, errors: readonly FieldError[]): ApiError {
  const rendered = errors.map((e) => `${e.field}: ${e.detail}`);
  const joined = rendered.length === 1 ? rendered[0] : `[${rendered.join(', ')}]`;
  const kind = type.group === '' ? type.kind : `${type.kind}.${type.group}`;
  return new ApiError(422, 'Invalid', `${kind} "${name}" is invalid: ${joined}`, {
    name,
    ...(type.group === '' ? {} : { group: type.group }),
    kind: type.kind,
    causes: errors.map((e) => ({ reason: e.type, message: e.detail, field: e.field })),
  });
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function methodNotAllowed(): ApiError {
  return new ApiError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
  );
}

export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

/** What etcd storage answers, as a bare 500 without reason, when a create carries a resourceVersion. */
export function resourceVersionOnCreate(): ApiError {
  return new ApiError(500, '', 'resourceVersion should not be set on objects to be created');
}

export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

/**
 * A read asking for a revision the server has not reached: a 504 Timeout whose
 * cause tells clients it is that. The watch cache, having waited, asks for a
 * retry after 1 s; the etcd paths answer at once and ask for none.
 */
export function tooLargeResourceVersion(
  requested: number,
  current: number,
  retryAfterSeconds: number,
): ApiError {
  return new ApiError(
    504,
    'Timeout',
    `Timeout: Too large resource version: ${requested}, current: ${current}`,
    {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}),
    },
  );
}
