"""The one exception of the client and the error codes of the REST API."""

from __future__ import annotations

from typing import Dict, Optional, Type

# Error codes of the REST API's error shape {"error": {"code", "message"}}.
INVALID = "invalid"
NOT_FOUND = "not_found"
CONFLICT = "conflict"
TOO_LARGE = "too_large"
UNAVAILABLE = "unavailable"
MISMATCH = "mismatch"
UNAUTHORIZED = "unauthorized"
FORBIDDEN = "forbidden"
UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
TOO_MANY_REQUESTS = "too_many_requests"
INTERNAL = "internal"


class EngramError(Exception):
    """An error answered by the server, or met on the way to it.

    status is the HTTP status (0 when there was no answer: the server could
    not be reached, did not answer in time, or the client refused the call
    before sending it); code is one of the codes above; message is the
    server's sentence for the caller. retry_after is the seconds the server
    asked to wait (429 only), else None.
    """

    def __init__(self, status: int, code: str, message: str, retry_after: Optional[float] = None) -> None:
        super().__init__(f"{code}: {message}" if status == 0 else f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


class InvalidError(EngramError):
    """The request is malformed or names a bad value (400, code invalid)."""


class UnauthorizedError(EngramError):
    """No API key, or an unknown or revoked one (401)."""


class ForbiddenError(EngramError):
    """The key's role or binding does not allow the call (403)."""


class NotFoundError(EngramError):
    """No such record in the scope (404)."""


class ConflictError(EngramError):
    """The record changed or exists already (409)."""


class TooManyRequestsError(EngramError):
    """The key sent too many requests; wait retry_after seconds (429)."""


class UnavailableError(EngramError):
    """The server is not ready, could not be reached or did not answer in time (503 or no answer)."""


_classes: Dict[str, Type[EngramError]] = {
    INVALID: InvalidError,
    UNAUTHORIZED: UnauthorizedError,
    FORBIDDEN: ForbiddenError,
    NOT_FOUND: NotFoundError,
    CONFLICT: ConflictError,
    TOO_MANY_REQUESTS: TooManyRequestsError,
    UNAVAILABLE: UnavailableError,
}

_status_codes: Dict[int, str] = {
    400: INVALID,
    401: UNAUTHORIZED,
    403: FORBIDDEN,
    404: NOT_FOUND,
    409: CONFLICT,
    413: TOO_LARGE,
    415: UNSUPPORTED_MEDIA_TYPE,
    422: MISMATCH,
    429: TOO_MANY_REQUESTS,
    502: UNAVAILABLE,
    503: UNAVAILABLE,
    504: UNAVAILABLE,
}


def code_of_status(status: int) -> str:
    """The code of an answer whose body is not the REST error shape (a
    proxy's page), guessed from its status."""
    if status in _status_codes:
        return _status_codes[status]
    return INVALID if 400 <= status < 500 else INTERNAL


def make_error(status: int, code: str, message: str, retry_after: Optional[float] = None) -> EngramError:
    """The EngramError subclass of code (EngramError itself for the others)."""
    return _classes.get(code, EngramError)(status, code, message, retry_after)
