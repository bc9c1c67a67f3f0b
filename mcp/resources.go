package mcp

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engramhq/engram"
)

// Resource URIs. A resource's scope is the server's default scope, with
// the user the profile template names.
const (
	ProfileURI        = "engram://profile"
	UserProfileURI    = "engram://users/{user}/profile"
	MemoryTemplateURI = "engram://memories/{id}"
	memoryURIPrefix   = "engram://memories/"
	userURIPrefix     = "engram://users/"
	profileURISuffix  = "/profile"
	jsonType          = "application/json"
)

func (c *caller) addResources(s *sdk.Server) {
	s.AddResource(&sdk.Resource{URI: ProfileURI, Name: "profile", MIMEType: jsonType,
		Description: "The profile of the server's default user: stable traits, transient states and core memories."}, c.readProfile)
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: UserProfileURI, Name: "user profile", MIMEType: jsonType,
		Description: "The profile of a user of the server's project."}, c.readProfile)
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: MemoryTemplateURI, Name: "memory", MIMEType: jsonType,
		Description: "One memory by its id, in the server's default scope."}, c.readMemory)
}

func (c *caller) readProfile(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	var a ScopeArgs
	if uri != ProfileURI {
		user, ok := strings.CutSuffix(strings.TrimPrefix(uri, userURIPrefix), profileURISuffix)
		if u, err := url.PathUnescape(user); ok && err == nil && u != "" {
			a.User = u
		} else {
			return nil, sdk.ResourceNotFoundError(uri)
		}
	}
	sc, err := c.scope(a)
	if err != nil {
		return nil, c.toolError(ctx, "profile", err)
	}
	p, err := c.svc.Profile(ctx, sc)
	if err != nil {
		return nil, c.toolError(ctx, "profile", err)
	}
	return jsonResource(uri, p)
}

func (c *caller) readMemory(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	id, err := url.PathUnescape(strings.TrimPrefix(uri, memoryURIPrefix))
	if err != nil || id == "" {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	sc, err := c.scope(ScopeArgs{})
	if err != nil {
		return nil, c.toolError(ctx, "memory", err)
	}
	m, err := c.svc.GetMemory(ctx, sc, id)
	if engram.ErrorCode(err) == engram.ENOTFOUND {
		return nil, sdk.ResourceNotFoundError(uri)
	} else if err != nil {
		return nil, c.toolError(ctx, "memory", err)
	}
	return jsonResource(uri, m)
}

func jsonResource(uri string, v any) (*sdk.ReadResourceResult, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: jsonType, Text: string(b)}}}, nil
}
