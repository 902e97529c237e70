// The one JSON Schema validator of the service. HTTP routes, the domain and the MCP tools compile
// their schemas here, so the same schema object is checked the same way everywhere.
import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';

export const ajv = new Ajv({
  allErrors: true, // report every bad field at once, not just the first
  coerceTypes: false, // "42" is not 42: no silent coercion
  removeAdditional: false, // unknown properties are errors, never silently dropped
  useDefaults: false,
  strict: true,
  verbose: true, // errors carry the value, so that a refusal can say which rule the value broke
});
addFormats.default(ajv, ['email', 'uri']);

/**
 * One character but NUL, meaning the same with or without the regex u flag (a code unit that is no
 * surrogate, or a surrogate pair): Ajv uses the flag, clients reading the published schemas often do
 * not, and a range of surrogates alone would refuse every emoji there.
 */
const CHARACTER = '(?:[^\\u0000\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])';
/**
 * Characters nobody can read beside whitespace and NUL: other controls (C0, DEL, C1) and Unicode's
 * Default_Ignorable_Code_Point below U+FFFF (checked in test/unit/inquiry-rules.test.ts). Beyond U+FFFF
 * all count as visible: without the u flag a pattern cannot tell surrogate pairs apart.
 */
const INVISIBLE =
  '\\u0001-\\u0008\\u000E-\\u001F\\u007F-\\u009F\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F' +
  '\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u206F\\u3164\\uFE00-\\uFE0F\\uFFA0\\uFFF0-\\uFFF8';
const VISIBLE_CHARACTER = `(?:[^\\s${INVISIBLE}\\u0000\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])`;

/**
 * Written text: a visible character (not only whitespace or INVISIBLE), no NUL (PostgreSQL cannot store
 * it in text) and no lone surrogate (no character: UTF-8 cannot hold it). Each code unit can match one
 * way only, so that a long value costs linear time, never backtracking.
 */
export const WRITTEN_TEXT = `^[\\s${INVISIBLE}]*${VISIBLE_CHARACTER}${CHARACTER}*$`;
/** Text that may be blank, or empty, but has no NUL character and no lone surrogate. */
export const OPTIONAL_TEXT = `^${CHARACTER}*$`;

export interface FieldError {
  /** RFC 6901 JSON Pointer into the request body ("" is the body itself). */
  readonly pointer: string;
  readonly detail: string;
}

/** A surrogate code unit not paired with another: with the u flag, a pair is one code point, not Cs. */
export const hasLoneSurrogate = (value: string): boolean => /\p{Surrogate}/u.test(value);

function patternDetail(pattern: string, value: unknown): string {
  if (pattern !== WRITTEN_TEXT && pattern !== OPTIONAL_TEXT) return `has the wrong format (expected ${pattern})`;
  if (typeof value === 'string' && value.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (typeof value === 'string' && hasLoneSurrogate(value)) return 'must be Unicode text: it has a lone surrogate (\\uD800-\\uDFFF)';
  return 'must contain a visible character, not only spaces or invisible ones';
}

const escapePointerToken = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * At most this many bad fields are listed: a 64 KiB body can hold thousands of unknown keys, and an
 * entry for each would make the 400 more than anyone reads, and an amplifier for whoever sends them.
 */
export const MAX_FIELD_ERRORS = 50;

/**
 * Turns ajv's errors into one plain-language `{pointer, detail}` per bad field (its first problem),
 * the first MAX_FIELD_ERRORS of them. When more were found, one more entry says how many were left
 * off, in the same shape: its pointer "" is the body as a whole.
 */
export function toFieldErrors(errors: readonly ErrorObject[]): FieldError[] {
  const byPointer = new Map<string, FieldError>();
  for (const error of errors) {
    const fieldError = describe(error);
    if (!byPointer.has(fieldError.pointer)) byPointer.set(fieldError.pointer, fieldError);
  }
  const fieldErrors = [...byPointer.values()];
  if (fieldErrors.length <= MAX_FIELD_ERRORS) return fieldErrors;
  const leftOff = fieldErrors.length - MAX_FIELD_ERRORS;
  return [
    ...fieldErrors.slice(0, MAX_FIELD_ERRORS),
    { pointer: '', detail: `has ${leftOff} more invalid fields, not listed here; fix these and send it again to see the rest` },
  ];
}

function describe(error: ErrorObject): FieldError {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { pointer: `${error.instancePath}/${escapePointerToken(String(params.missingProperty))}`, detail: 'is required' };
    case 'additionalProperties':
      return {
        pointer: `${error.instancePath}/${escapePointerToken(String(params.additionalProperty))}`,
        detail: 'is not an allowed property',
      };
    case 'type':
      return {
        pointer: error.instancePath,
        detail: params.type === 'object' ? 'must be a JSON object' : `must be a ${String(params.type)}`,
      };
    case 'minLength':
      return { pointer: error.instancePath, detail: 'must not be empty' };
    case 'maxLength':
      return { pointer: error.instancePath, detail: `must be at most ${String(params.limit)} characters long` };
    case 'pattern':
      return { pointer: error.instancePath, detail: patternDetail(String(params.pattern), error.data) };
    case 'format':
      return {
        pointer: error.instancePath,
        detail:
          params.format === 'email'
            ? 'must be a valid email address, such as name@example.com'
            : `must be a valid ${String(params.format)}`,
      };
    default:
      return { pointer: error.instancePath, detail: error.message ?? 'is not valid' };
  }
}
