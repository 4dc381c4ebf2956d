/**
 * Why a bootstrap failed, as a stable code plus a message that names the object and says what to
 * do. The codes are listed in docs/certs.md.
 */
export type CertsErrorCode =
  | 'InvalidInput'
  | 'Forbidden'
  | 'NotFound'
  | 'WrongSecretType'
  | 'CorruptPem'
  | 'KeyMismatch'
  | 'NoConversionWebhook'
  | 'Conflict'
  | 'ApiError'
  | 'FileSystem';

export class CertsError extends Error {
  override name = 'CertsError';
  readonly code: CertsErrorCode;

  constructor(code: CertsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export function isCertsError(error: unknown, code?: CertsErrorCode): error is CertsError {
  return error instanceof CertsError && (code === undefined || error.code === code);
}
