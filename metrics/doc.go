// Package metrics gives engram serve its Prometheus metrics and its
// operation log. A Metrics holds the collectors and implements the hooks
// the layers below report through: http.RequestObserver (requests by route
// pattern, method and status), engine.Observer (memory operations, search
// stages and channels, background jobs, embedder calls, and one log line
// per memory operation) and the openai client's call hook (model calls).
// Scrape-time collectors read the job backlog and a circuit breaker's
// state. No label ever holds a tenant, a user, an id or a text: every
// label's values come from a fixed set, so the number of series does not
// grow with the data.
package metrics
