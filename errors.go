package engram

import (
	"errors"
	"fmt"
)

// Error codes. Transports map them to their own status codes in exactly one
// place (see the http package).
const (
	ECONFLICT     = "conflict"               // the write contradicts current state
	EINTERNAL     = "internal"               // a bug or an unexpected failure
	EINVALID      = "invalid"                // the request is malformed or breaks a limit
	ENOTFOUND     = "not_found"              // no such record in the caller's scope
	ETOOLARGE     = "too_large"              // the request body or a batch is too big
	EUNAVAILABLE  = "unavailable"            // a dependency (database, model) is down
	EMISMATCH     = "mismatch"               // e.g. vectors from a different embedder
	EUNAUTHORIZED = "unauthorized"           // missing or wrong credentials
	EFORBIDDEN    = "forbidden"              // refused whatever the credentials: a foreign Host or Origin
	EMEDIATYPE    = "unsupported_media_type" // the body is not of a type the endpoint reads
	ETOOMANY      = "too_many_requests"      // a rate or concurrency limit; retry later
	EMETHOD       = "method_not_allowed"     // the path exists, not with this method
)

// Error is an error with a machine-readable code and a sentence meant for
// the person who sent the request.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string { return fmt.Sprintf("engram: %s: %s", e.Code, e.Message) }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain, or a
// generic sentence for other errors so internals do not leak to clients.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// IsNotFound reports whether err carries the ENOTFOUND code.
func IsNotFound(err error) bool { return ErrorCode(err) == ENOTFOUND }
