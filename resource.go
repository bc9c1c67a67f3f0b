package engram

import (
	"context"
	"io"
	"time"
)

// A resource is a file a client gave engram: a document, an image, any
// bytes. Its content is stored by the store's backend in chunks of at most
// ResourceChunkBytes, written and read one chunk at a time so that neither
// an upload nor a download holds the whole file in memory. A resource is
// addressed by its id and identified by the SHA-256 of its content; it
// belongs to a namespace and is read, listed and deleted within a scope
// like every record. Documents (text, Markdown, HTML, PDF) are also split
// into memories of kind resource that cite it (see ResourceCitation).

// ResourceChunkBytes is the size of every stored chunk of a resource's
// content but the last.
const ResourceChunkBytes = 1 << 20

// Resource is the metadata of a stored file.
type Resource struct {
	ID        string    `json:"id"`
	Namespace Namespace `json:"namespace"`
	Name      string    `json:"name"`             // the file name the client gave
	MIMEType  string    `json:"mime_type"`        // e.g. "application/pdf"
	Source    string    `json:"source,omitempty"` // where it came from: a URL, a path, an app
	Size      int64     `json:"size"`             // bytes of content
	SHA256    string    `json:"sha256"`           // hex SHA-256 of the content
	Memories  int       `json:"memories"`         // memories of kind resource made from it
	CreatedAt time.Time `json:"created_at"`
}

// ResourceFilter narrows a list of resources.
type ResourceFilter struct {
	Limit  int    `json:"limit,omitempty"`  // default DefaultLimit, at most MaxLimit
	Cursor string `json:"cursor,omitempty"` // from a previous page's Next
}

// ResourcePage is one page of resources, newest first.
type ResourcePage struct {
	Resources []Resource `json:"resources"`
	Next      string     `json:"next,omitempty"`
}

// MaxResourceNameBytes is the longest resource name or source.
const MaxResourceNameBytes = 1024

// Validate checks the fields a client sets (namespace, name, MIME type,
// source) and returns an EINVALID error naming the first bad one.
func (r *Resource) Validate() error {
	if err := r.Namespace.Validate(); err != nil {
		return err
	}
	if r.Name == "" {
		return Errorf(EINVALID, "resource: name is required")
	}
	if err := checkText("resource: name", r.Name, MaxResourceNameBytes); err != nil {
		return err
	}
	if r.MIMEType == "" {
		return Errorf(EINVALID, "resource: mime_type is required")
	}
	if err := checkText("resource: mime_type", r.MIMEType, MaxShortBytes); err != nil {
		return err
	}
	return checkText("resource: source", r.Source, MaxResourceNameBytes)
}

// ResourceCitation is where a memory of kind resource comes from; it is
// kept in the memory's metadata under the key "resource" (see
// MetaResource), so every search hit carries it.
type ResourceCitation struct {
	ResourceID string   `json:"resource_id"`
	Start      int      `json:"start"`              // byte offset of the span in the extracted text
	End        int      `json:"end"`                // byte offset just after it
	CharStart  int      `json:"char_start"`         // the same span in characters (code points)
	CharEnd    int      `json:"char_end"`           //
	Page       int      `json:"page,omitempty"`     // 1-based page of a PDF
	Headings   []string `json:"headings,omitempty"` // the heading path, outermost first
	Index      int      `json:"index"`              // 0-based position among the resource's memories
	Name       string   `json:"name,omitempty"`     // the resource's name
}

// Metadata keys of memories made from resources: MetaResourceID holds the
// resource's id (filterable with MemoryFilter.Metadata), MetaResource the
// whole ResourceCitation.
const (
	MetaResourceID = "resource_id"
	MetaResource   = "resource"
)

// ResourceReader is the capability of a Reader whose store keeps
// resources. Resources whose upload has not completed are invisible to it.
type ResourceReader interface {
	// GetResource returns the resource or ENOTFOUND (also for one outside
	// the scope).
	GetResource(ctx context.Context, s Scope, id string) (*Resource, error)
	// ListResources returns resources newest first and the next page's
	// cursor; a bad cursor is EINVALID.
	ListResources(ctx context.Context, s Scope, f ResourceFilter) ([]Resource, string, error)
	// ResourceChunk returns chunk seq (0-based) of the content of a
	// resource of the tenant, uploaded or not, or ENOTFOUND when there is
	// no such chunk.
	ResourceChunk(ctx context.Context, tenant Namespace, id string, seq int) ([]byte, error)
	// ResourceBytes returns the bytes of content the tenant (org, project)
	// stores, counting uploads in progress.
	ResourceBytes(ctx context.Context, tenant Namespace) (int64, error)
}

// UploadSweeper is the capability of a Reader that finds, across
// tenants, uploads that never completed (their server stopped mid-way),
// for the sweeper that removes them; never for serving a client.
type UploadSweeper interface {
	// AbandonedUploads returns up to limit resources of any tenant whose
	// upload started before before and has not completed. A limit below 1
	// is EINVALID.
	AbandonedUploads(ctx context.Context, before time.Time, limit int) ([]Resource, error)
}

// ResourceFinder is the capability of a Reader that finds a resource by
// its content, so that the same bytes uploaded again into one namespace
// are kept once (the engine then answers with the stored resource).
type ResourceFinder interface {
	// FindResource returns the oldest completed resource whose namespace
	// is exactly n (not a scope: another user's, agent's or session's
	// resource is never shared) with that content SHA-256 and size, or
	// ENOTFOUND.
	FindResource(ctx context.Context, n Namespace, sha256 string, size int64) (*Resource, error)
}

// ResourceDumper is the capability of a Reader that lists the resources
// of every tenant, for copying a store to another (engram migrate-store);
// never for serving a client.
type ResourceDumper interface {
	// DumpResources calls fn for every resource of every tenant whose
	// upload completed, in byte order of (org, project, id). An error from
	// fn stops it and is returned as is.
	DumpResources(ctx context.Context, fn func(Resource) error) error
}

// ResourceWriter is the capability of a Tx whose store keeps resources.
type ResourceWriter interface {
	// InsertResource stores the metadata of a resource whose upload starts
	// (invisible to reads until CompleteResource); ECONFLICT if its id
	// exists, EINVALID for bad fields.
	InsertResource(ctx context.Context, r *Resource) error
	// PutResourceChunk stores chunk seq of a resource of the tenant and
	// adds its length to the resource's size; ENOTFOUND when there is no
	// such resource, EINVALID for an empty chunk or one over
	// ResourceChunkBytes.
	PutResourceChunk(ctx context.Context, tenant Namespace, id string, seq int, data []byte) error
	// CompleteResource records the content's SHA-256 and the number of
	// memories made from it and makes the resource visible; ENOTFOUND when
	// there is no such resource.
	CompleteResource(ctx context.Context, tenant Namespace, id, sha256 string, memories int) error
	// PurgeResource removes a resource of the tenant with all its content.
	// It is not an error if there is nothing to remove.
	PurgeResource(ctx context.Context, tenant Namespace, id string) error
}

// ResourceService is the capability of a Service that stores resources.
type ResourceService interface {
	// AddResource stores the content read from body under the metadata of
	// r (namespace, name, MIME type, source), splits a document into
	// memories of kind resource, and returns the stored resource. On any
	// error nothing is kept: EINVALID for bad metadata, ETOOLARGE when the
	// content would take the tenant over its quota.
	AddResource(ctx context.Context, r Resource, body io.Reader) (*Resource, error)
	// GetResource returns a resource's metadata or ENOTFOUND.
	GetResource(ctx context.Context, s Scope, id string) (*Resource, error)
	// ListResources returns a page of resources, newest first.
	ListResources(ctx context.Context, s Scope, f ResourceFilter) (*ResourcePage, error)
	// OpenResource returns a resource's metadata and a reader of its
	// content that reads one chunk at a time; ENOTFOUND when there is no
	// such resource in the scope. The caller closes the reader.
	OpenResource(ctx context.Context, s Scope, id string) (*Resource, io.ReadCloser, error)
	// DeleteResource removes a resource, its content and the memories made
	// from it; ENOTFOUND when there is no such resource in the scope.
	DeleteResource(ctx context.Context, s Scope, id string) error
}
