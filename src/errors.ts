// The closed set of errors the domain raises. Each carries a stable code, its HTTP status and
// whether the caller may retry; the HTTP layer turns them into problem+json in one place.
import type { FieldError } from './validation/ajv.js';

export type ErrorCode =
  | 'invalid_request'
  | 'invalid_idempotency_key'
  | 'idempotency_key_reused'
  | 'inquiry_not_stored'
  | 'store_unavailable';

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The input broke the schema; `errors` names every bad field. */
export class ValidationError extends DomainError {
  constructor(
    readonly errors: readonly FieldError[],
    message = 'The request has invalid fields; see errors for each one.',
  ) {
    super('invalid_request', 400, message);
  }
}

export class IdempotencyKeyError extends DomainError {
  constructor(message: string) {
    super('invalid_idempotency_key', 400, message);
  }
}

/** draft-ietf-httpapi-idempotency-key-header §2.7: a key reused with another payload is 422. */
export class IdempotencyConflictError extends DomainError {
  constructor() {
    super(
      'idempotency_key_reused',
      422,
      'This Idempotency-Key was already used with a different request body. Use a new key for a new inquiry.',
    );
  }
}

/** Nothing was stored; the client may send the same inquiry again. */
export class InquiryNotStoredError extends DomainError {
  constructor(cause: unknown) {
    super('inquiry_not_stored', 500, 'The inquiry could not be stored and nothing was saved. Please try again in a moment.', true);
    this.cause = cause;
  }
}
