import type { components } from './schema.js';

/** A code of the REST API's error shape, e.g. "invalid" or "not_found". */
export type ErrorCode = components['schemas']['Error']['error']['code'];

const codeByStatus: Record<number, ErrorCode> = {
  400: 'invalid',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'too_large',
  415: 'unsupported_media_type',
  422: 'mismatch',
  429: 'too_many_requests',
  502: 'unavailable',
  503: 'unavailable',
  504: 'unavailable',
};

/**
 * The error every method of EngramClient throws, except when the caller's
 * own AbortSignal ends the call (then its reason is thrown as it is).
 *
 * status is the HTTP status, or 0 when no answer came (the server could not
 * be reached or did not answer within the timeout; code is then
 * "unavailable"). code and message are those of the server's error body;
 * for an answer that is not in engram's error shape (a proxy's page) the
 * code is inferred from the status. retryAfter is the Retry-After header in
 * seconds on a 429 (and 503) answer when the server sends one.
 */
export class EngramError extends Error {
  override readonly name = 'EngramError';
  readonly status: number;
  readonly code: ErrorCode;
  readonly retryAfter: number | undefined;

  constructor(status: number, code: ErrorCode, message: string, options?: { retryAfter?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.code = code;
    this.retryAfter = options?.retryAfter;
  }
}

/** Reads an error answer into an EngramError; never throws. */
export async function errorFromResponse(res: Response): Promise<EngramError> {
  const retryAfter = parseRetryAfter(res.headers.get('Retry-After'));
  const text = await res.text().catch(() => '');
  const shaped = parseErrorBody(text);
  if (shaped) {
    return new EngramError(res.status, shaped.code, shaped.message, { retryAfter });
  }
  const code = codeByStatus[res.status] ?? (res.status >= 400 && res.status < 500 ? 'invalid' : 'internal');
  const detail = text.trim().slice(0, 200);
  const message = `the server answered ${res.status} ${res.statusText}` + (detail ? `: ${detail}` : '');
  return new EngramError(res.status, code, message, { retryAfter });
}

function parseErrorBody(text: string): { code: ErrorCode; message: string } | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const err = (body as { error?: unknown }).error;
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || typeof message !== 'string') return undefined;
  return { code: code as ErrorCode, message };
}

// parseRetryAfter reads Retry-After's delta-seconds or HTTP-date form.
function parseRetryAfter(h: string | null): number | undefined {
  if (h === null || h.trim() === '') return undefined;
  if (/^\d+$/.test(h.trim())) return Number(h.trim());
  const at = Date.parse(h);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - Date.now()) / 1000));
}
