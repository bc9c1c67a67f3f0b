package http

// The route groups of a Server: one per capability, each holding the
// handlers of its routes. They share the Server's service, limits and
// logger.

import "github.com/engramhq/engram"

// recordRoutes serve episodes, jobs and memories.
type recordRoutes struct{ *Server }

// routes are the episode, job and memory routes.
func (s *recordRoutes) routes() []route {
	episodeList := withScope(append([]param{
		{name: "role", repeated: true}, {name: "speaker"},
		{name: "occurred_after"}, {name: "occurred_before"},
		{name: "contains"}, {name: "meta.{key}"},
	}, pageParams...)...)
	memoryList := withScope(append([]param{
		{name: "kind", repeated: true}, {name: "status", repeated: true},
		{name: "created_after"}, {name: "created_before"},
		{name: "valid_at"}, {name: "valid_after"}, {name: "valid_before"},
		{name: "contains"}, {name: "meta.{key}"}, {name: "meta_in.{key}", repeated: true},
		{name: "id", repeated: true}, {name: "source", repeated: true}, vaultParam,
	}, pageParams...)...)

	return []route{
		{method: "POST", path: "/v1/episodes", body: jsonBody, handle: s.handleAddEpisodes},
		{method: "GET", path: "/v1/episodes", params: episodeList, handle: s.handleListEpisodes},
		{method: "GET", path: "/v1/episodes/{id}", params: withScope(), handle: s.handleGetEpisode},
		{method: "DELETE", path: "/v1/episodes/{id}", params: withScope(), handle: s.handleDeleteEpisode},

		{method: "GET", path: "/v1/jobs", params: jobList, handle: s.handleListJobs},
		{method: "GET", path: "/v1/jobs/{id}", params: withScope(), handle: s.handleGetJob},

		{method: "POST", path: "/v1/memories", body: jsonBody, handle: s.handleAddMemories},
		{method: "GET", path: "/v1/memories", params: memoryList, handle: s.handleListMemories},
		{method: "POST", path: "/v1/memories/list", body: jsonBody, role: engram.RoleRead, handle: s.handleListMemoriesPost},
		{method: "GET", path: "/v1/memories/{id}", params: withScope(vaultParam), handle: s.handleGetMemory},
		{method: "PATCH", path: "/v1/memories/{id}", params: withScope(), body: jsonBody, handle: s.handleUpdateMemory},
		{method: "DELETE", path: "/v1/memories/{id}", params: withScope(param{name: "hard"}, param{name: "reason"}, vaultParam), handle: s.handleDeleteMemory},
		{method: "POST", path: "/v1/memories/{id}/supersede", params: withScope(), body: jsonBody, handle: s.handleSupersedeMemory},
		{method: "POST", path: "/v1/memories/{id}/restore", params: withScope(vaultParam), body: jsonBody, handle: s.handleRestoreMemory},
		{method: "GET", path: "/v1/memories/{id}/history", params: withScope(vaultParam), handle: s.handleHistory},
		{method: "POST", path: "/v1/memories/{id}/rollback", params: withScope(), body: jsonBody, handle: s.handleRollback},
	}
}

// mediaRoutes serve resources and identities.
type mediaRoutes struct{ *Server }

// resourceRoutes are the resource routes.
func (s *mediaRoutes) resourceRoutes() []route {
	return []route{
		{method: "POST", path: "/v1/resources", params: withScope(param{name: "name"}, param{name: "source"}), maxBody: s.maxResource, body: multipartBody, handle: s.handleAddResource},
		{method: "GET", path: "/v1/resources", params: withScope(pageParams...), handle: s.handleListResources},
		{method: "GET", path: "/v1/resources/{id}", params: withScope(), handle: s.handleGetResource},
		{method: "GET", path: "/v1/resources/{id}/content", params: withScope(), handle: s.handleResourceContent},
		{method: "DELETE", path: "/v1/resources/{id}", params: withScope(), handle: s.handleDeleteResource},
	}
}

// identityRoutes are the routes of observations, identities and persons.
func (s *mediaRoutes) identityRoutes() []route {
	return []route{
		{method: "POST", path: "/v1/observations", body: jsonBody, handle: s.handleAddObservations},
		{method: "GET", path: "/v1/identities", params: identityList, handle: s.handleListIdentities},
		{method: "POST", path: "/v1/identities/link", params: withScope(), body: jsonBody, handle: s.handleLinkIdentities},
		{method: "POST", path: "/v1/identities/merge", params: withScope(), body: jsonBody, handle: s.handleMergeIdentities},
		{method: "GET", path: "/v1/identities/{id}", params: withScope(), handle: s.handleGetIdentity},
		{method: "DELETE", path: "/v1/identities/{id}", params: withScope(), handle: s.handleDeleteIdentity},
		{method: "GET", path: "/v1/identities/{id}/history", params: withScope(), handle: s.handleIdentityHistory},
		{method: "POST", path: "/v1/identities/{id}/split", params: withScope(), body: jsonBody, handle: s.handleSplitIdentity},
		{method: "POST", path: "/v1/identities/{id}/unlink", params: withScope(), body: jsonBody, handle: s.handleUnlinkIdentity},
		{method: "GET", path: "/v1/persons", params: withScope(), handle: s.handleListPersons},
	}
}

// graphRoutes serve the entity graph and its communities.
type graphRoutes struct{ *Server }

// routes are the entity, graph and community routes.
func (s *graphRoutes) routes() []route {
	return []route{
		{method: "GET", path: "/v1/entities", params: entityList, handle: s.handleListEntities},
		{method: "GET", path: "/v1/entities/{id}", params: withScope(), handle: s.handleGetEntity},
		{method: "DELETE", path: "/v1/entities/{id}", params: withScope(), handle: s.handleDeleteEntity},
		{method: "POST", path: "/v1/entities/{id}/merge", params: withScope(), body: jsonBody, handle: s.handleMergeEntities},
		{method: "POST", path: "/v1/entities/{id}/split", params: withScope(), body: jsonBody, handle: s.handleSplitEntity},
		{method: "GET", path: "/v1/entities/{id}/history", params: withScope(), handle: s.handleEntityHistory},
		{method: "GET", path: "/v1/graph", params: graphParams, handle: s.handleGraph},
		{method: "GET", path: "/v1/communities", params: withScope(), handle: s.handleListCommunities},
		{method: "GET", path: "/v1/communities/{id}", params: withScope(), handle: s.handleGetCommunity},
		{method: "POST", path: "/v1/communities/refresh", params: withScope(), body: jsonBody, handle: s.handleRefreshCommunities},
	}
}
