package http

import "github.com/engramhq/engram"

// Backend is everything a Server serves: the whole engram.Service, the
// tenant-wide lookups of engram.Locator (GET /v1/scopes; the Mem0 API
// mounted beside the REST API locates memories by id), and the admin's
// listing of tenants of engram.TenantLister (GET /v1/tenants, mounted
// beside the API by engram serve), and the tenant's sensitive policy and
// scan of engram.SensitivePolicies (GET and PUT
// /v1/tenants/{org}/{project}/sensitive and POST .../sensitive/scan,
// mounted the same way). *engine.Engine
// implements it, and so does engram serve's stand-in for a PostgreSQL
// store not reached yet; the compiler checks both where they are handed to
// NewServer, so every route is served by every backend.
type Backend interface {
	engram.Service
	engram.Locator
	engram.TenantLister
	engram.SensitivePolicies
}
