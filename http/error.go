package http

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"time"

	"github.com/engramhq/engram"
)

// ErrorStatus returns the HTTP status for an engram error code. It is the
// one place where codes become statuses; unknown codes are 500.
//
// EMISMATCH is 422: the request is well formed but cannot be applied to the
// stored data (vectors of another embedder), which is not the same thing as
// ECONFLICT's 409, where retrying after the state changes may succeed. Giving
// each code its own status also lets a client recover the code from a
// response whose body is not ours (a proxy's error page).
func ErrorStatus(code string) int {
	switch code {
	case engram.EINVALID:
		return http.StatusBadRequest
	case engram.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case engram.EFORBIDDEN:
		return http.StatusForbidden
	case engram.EMEDIATYPE:
		return http.StatusUnsupportedMediaType
	case engram.ENOTFOUND:
		return http.StatusNotFound
	case engram.ECONFLICT:
		return http.StatusConflict
	case engram.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case engram.EMISMATCH:
		return http.StatusUnprocessableEntity
	case engram.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	case engram.ETOOMANY:
		return http.StatusTooManyRequests
	case engram.EMETHOD:
		return http.StatusMethodNotAllowed
	}
	return http.StatusInternalServerError
}

// errorCodes lists every code ErrorStatus knows, for the reverse lookup.
var errorCodes = []string{
	engram.EINVALID, engram.EUNAUTHORIZED, engram.EFORBIDDEN, engram.ENOTFOUND, engram.ECONFLICT,
	engram.ETOOLARGE, engram.EMEDIATYPE, engram.EMISMATCH, engram.EUNAVAILABLE, engram.ETOOMANY, engram.EMETHOD, engram.EINTERNAL,
}

// codeOfStatus guesses the engram code of a response that carries no error
// body of ours, by inverting ErrorStatus.
func codeOfStatus(status int) string {
	for _, c := range errorCodes {
		if ErrorStatus(c) == status {
			return c
		}
	}
	switch {
	case status == http.StatusBadGateway || status == http.StatusGatewayTimeout:
		return engram.EUNAVAILABLE
	case status >= 400 && status < 500:
		return engram.EINVALID
	}
	return engram.EINTERNAL
}

// errorResponse is the body of every error response.
type errorResponse struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// internalMessage replaces the message of internal errors so that no
// detail of a failure (paths, SQL) reaches a client.
const internalMessage = "internal error"

// WriteError writes err in the REST API's error shape ({"error": {"code",
// "message"}}) with the status of its code, for a Mount's handler. Internal
// errors are logged to slog.Default with their detail and answered
// generically.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	(&Server{logger: slog.Default()}).writeError(w, r, err)
}

// writeError writes err in the error shape with the status of its code.
// Internal errors are logged with their detail and answered generically.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := engram.ErrorCode(err), engram.ErrorMessage(err)
	status := ErrorStatus(code)
	if status == http.StatusInternalServerError {
		code, msg = engram.EINTERNAL, internalMessage
		level := slog.LevelError
		if r.Context().Err() != nil {
			// The client went away; the failure is most likely its
			// cancelled context, not ours.
			level = slog.LevelInfo
		}
		s.logger.Log(r.Context(), level, "internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="engram"`)
	}
	writeJSON(w, status, errorResponse{Error: errorDetail{Code: code, Message: msg}})
}

// writeJSON writes v as the JSON body of a response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only a value the service built can get here (e.g. a NaN score);
		// answer in the error shape rather than with half a body.
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorResponse{Error: errorDetail{Code: engram.EINTERNAL, Message: internalMessage}})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// bodyError turns an error from decoding a JSON request body into an
// engram error with a sentence saying what is wrong.
func bodyError(what string, err error) error {
	var (
		maxErr    *http.MaxBytesError
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
		timeErr   *time.ParseError
		eerr      *engram.Error
		netErr    net.Error
	)
	switch {
	case errors.As(err, &eerr):
		return err
	case errors.As(err, &netErr) && netErr.Timeout():
		return engram.Errorf(engram.EINVALID, "%s did not arrive within the server's read timeout", what)
	case errors.As(err, &maxErr):
		return engram.Errorf(engram.ETOOLARGE, "%s is larger than the limit of %d bytes", what, maxErr.Limit)
	case errors.As(err, &syntaxErr):
		return engram.Errorf(engram.EINVALID, "%s is not valid JSON: %s (at byte %d)", what, trimJSONPrefix(syntaxErr.Error()), syntaxErr.Offset)
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return engram.Errorf(engram.EINVALID, "%s must be %s, not %s", what, jsonTypeName(typeErr.Type), typeErr.Value)
		}
		return engram.Errorf(engram.EINVALID, "%s: field %q must be %s, not %s", what, field, jsonTypeName(typeErr.Type), typeErr.Value)
	case errors.As(err, &timeErr):
		return engram.Errorf(engram.EINVALID, "%s: time %q is not in RFC 3339 format, e.g. 2024-05-01T12:00:00Z", what, timeErr.Value)
	case errors.Is(err, errEmptyBody):
		return engram.Errorf(engram.EINVALID, "%s is empty; expected a JSON object", what)
	case errors.Is(err, errUnexpectedEnd):
		return engram.Errorf(engram.EINVALID, "%s ends in the middle of a JSON value", what)
	}
	// Unknown fields, times that are not strings and the like come as plain
	// errors from encoding/json; their text is safe and says what is wrong.
	return engram.Errorf(engram.EINVALID, "%s: %s", what, trimJSONPrefix(err.Error()))
}

var (
	errEmptyBody     = errors.New("empty body")
	errUnexpectedEnd = errors.New("unexpected end of JSON")
)

func trimJSONPrefix(s string) string {
	const p = "json: "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// jsonTypeName names the JSON type that decodes into t.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[time.Time]() {
		return "a time string in RFC 3339 format"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return fmt.Sprintf("a JSON value for %s", t)
}
