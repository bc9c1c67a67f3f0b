package engram

import "context"

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the request it serves, so
// that the log lines a request causes (its operations on memories) can be
// matched with the request's own.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id ctx carries, "" when none.
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
