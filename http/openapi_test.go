package http_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

type openAPIDoc struct {
	OpenAPI    string                                `json:"openapi"`
	Info       map[string]any                        `json:"info"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas    map[string]openAPISchema  `json:"schemas"`
		Parameters map[string]openAPIParam   `json:"parameters"`
		Responses  map[string]map[string]any `json:"responses"`
	} `json:"components"`
}

type openAPIParam struct {
	Ref    string        `json:"$ref"`
	Name   string        `json:"name"`
	In     string        `json:"in"`
	Schema openAPISchema `json:"schema"`
}

type openAPISchema struct {
	Ref        string                   `json:"$ref"`
	Type       string                   `json:"type"`
	Properties map[string]openAPISchema `json:"properties"`
	Required   []string                 `json:"required"`
}

type openAPIOp struct {
	Parameters []openAPIParam  `json:"parameters"`
	Responses  map[string]any  `json:"responses"`
	Body       json.RawMessage `json:"requestBody"`
}

func loadOpenAPI(t *testing.T) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	if err := json.Unmarshal(engramhttp.OpenAPI(), &doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	return doc
}

func TestOpenAPI_Document(t *testing.T) {
	doc := loadOpenAPI(t)
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi = %q, want 3.x", doc.OpenAPI)
	}
	if doc.Info["title"] == nil || doc.Info["version"] == nil {
		t.Errorf("info lacks title or version: %v", doc.Info)
	}
	if len(doc.Paths) == 0 {
		t.Fatal("no paths")
	}

	// Every $ref must point at something that exists.
	var refs []string
	collectRefs(t, engramhttp.OpenAPI(), &refs)
	var raw map[string]any
	_ = json.Unmarshal(engramhttp.OpenAPI(), &raw)
	for _, ref := range refs {
		node := any(raw)
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, ok := node.(map[string]any)
			if !ok {
				node = nil
				break
			}
			node = m[part]
		}
		if node == nil {
			t.Errorf("$ref %q points at nothing", ref)
		}
	}

	// The served document is the embedded one.
	srv := httptest.NewServer(engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{Logger: discardLogger()}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if got, want := resp.StatusCode, 200; got != want {
		t.Fatalf("status = %d, want %d", got, want)
	}
	if got, want := resp.Header.Get("Content-Type"), "application/json"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	if !slices.Equal(body, engramhttp.OpenAPI()) {
		t.Error("served document differs from the embedded one")
	}
}

func collectRefs(t *testing.T, b []byte, out *[]string) {
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "$ref" {
					*out = append(*out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	walk(v)
}

// TestOpenAPI_CoversRoutes checks the document against the server's route
// table both ways, down to the query parameters of each operation.
func TestOpenAPI_CoversRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	s := engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{Logger: discardLogger()})

	documented := map[string]bool{}
	for path, item := range doc.Paths {
		if _, mount := item["x-engram-mount"]; mount {
			continue // served by engram serve's mounts; cmd/engram checks those
		}
		for method := range item {
			if method == "parameters" || !isMethod(method) {
				continue
			}
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	routes := engramhttp.Routes(s)
	registered := map[string]bool{}
	for _, rt := range routes {
		key := rt.Method + " " + rt.Path
		if registered[key] {
			t.Errorf("route %s registered twice", key)
		}
		registered[key] = true
		if !documented[key] {
			t.Errorf("route %s is not in openapi.json", key)
		}
	}
	for key := range documented {
		if !registered[key] {
			t.Errorf("openapi.json documents %s, which the server does not serve", key)
		}
	}

	for _, rt := range routes {
		item, ok := doc.Paths[rt.Path]
		if !ok {
			continue
		}
		var op openAPIOp
		if err := json.Unmarshal(item[strings.ToLower(rt.Method)], &op); err != nil {
			t.Fatalf("%s %s: %v", rt.Method, rt.Path, err)
		}
		var pathLevel []openAPIParam
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &pathLevel); err != nil {
				t.Fatal(err)
			}
		}
		docQuery := map[string]bool{} // name -> is an array
		var docPath []string
		for _, p := range append(pathLevel, op.Parameters...) {
			p = resolveParam(t, doc, p)
			switch p.In {
			case "query":
				docQuery[p.Name] = p.Schema.Type == "array"
			case "path":
				docPath = append(docPath, p.Name)
			}
		}
		for _, p := range rt.Params {
			isArray, ok := docQuery[p.Name]
			if !ok {
				t.Errorf("%s %s: query parameter %s is accepted but not documented", rt.Method, rt.Path, p.Name)
				continue
			}
			if isArray != p.Repeated {
				t.Errorf("%s %s: query parameter %s: documented as array = %v, repeatable = %v", rt.Method, rt.Path, p.Name, isArray, p.Repeated)
			}
			delete(docQuery, p.Name)
		}
		for name := range docQuery {
			t.Errorf("%s %s: documented query parameter %s is not accepted", rt.Method, rt.Path, name)
		}
		var wantPath []string
		for _, seg := range strings.Split(rt.Path, "/") {
			if strings.HasPrefix(seg, "{") {
				wantPath = append(wantPath, strings.Trim(seg, "{}"))
			}
		}
		sort.Strings(docPath)
		if !slices.Equal(docPath, wantPath) {
			t.Errorf("%s %s: documented path parameters %v, want %v", rt.Method, rt.Path, docPath, wantPath)
		}
		if len(op.Responses) == 0 {
			t.Errorf("%s %s: no responses documented", rt.Method, rt.Path)
		}
		hasBody := len(op.Body) > 0
		if wantBody := rt.Method == "POST" || rt.Method == "PATCH"; hasBody != wantBody {
			t.Errorf("%s %s: request body documented = %v, want %v", rt.Method, rt.Path, hasBody, wantBody)
		}
	}
}

// isMethod reports whether a key of a path item is an operation.
func isMethod(k string) bool {
	return slices.Contains([]string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}, k)
}

func resolveParam(t *testing.T, doc openAPIDoc, p openAPIParam) openAPIParam {
	if p.Ref == "" {
		return p
	}
	name := strings.TrimPrefix(p.Ref, "#/components/parameters/")
	r, ok := doc.Components.Parameters[name]
	if !ok {
		t.Fatalf("parameter $ref %q not found", p.Ref)
	}
	return r
}

// TestOpenAPI_SchemasMatchTypes keeps the component schemas in step with
// the JSON fields of the engram types they describe.
func TestOpenAPI_SchemasMatchTypes(t *testing.T) {
	doc := loadOpenAPI(t)
	for name, typ := range map[string]reflect.Type{
		"Namespace":              reflect.TypeFor[engram.Namespace](),
		"Scope":                  reflect.TypeFor[engram.Scope](),
		"Episode":                reflect.TypeFor[engram.Episode](),
		"EpisodeInput":           reflect.TypeFor[engram.EpisodeInput](),
		"AddEpisodesRequest":     reflect.TypeFor[engram.AddEpisodesRequest](),
		"AddEpisodesResult":      reflect.TypeFor[engram.AddEpisodesResult](),
		"Memory":                 reflect.TypeFor[engram.Memory](),
		"AddMemoriesRequest":     reflect.TypeFor[engram.AddMemoriesRequest](),
		"MemoryPatch":            reflect.TypeFor[engram.MemoryPatch](),
		"SupersedeRequest":       reflect.TypeFor[engram.SupersedeRequest](),
		"SupersedeResult":        reflect.TypeFor[engram.SupersedeResult](),
		"MemoryFilter":           reflect.TypeFor[engram.MemoryFilter](),
		"EpisodePage":            reflect.TypeFor[engram.EpisodePage](),
		"MemoryPage":             reflect.TypeFor[engram.MemoryPage](),
		"Version":                reflect.TypeFor[engram.Version](),
		"AuditEntry":             reflect.TypeFor[engram.AuditEntry](),
		"AuditPage":              reflect.TypeFor[engram.AuditPage](),
		"SearchRequest":          reflect.TypeFor[engram.SearchRequest](),
		"SearchResult":           reflect.TypeFor[engram.SearchResult](),
		"Hit":                    reflect.TypeFor[engram.Hit](),
		"ChannelHit":             reflect.TypeFor[engram.ChannelHit](),
		"PurgeCounts":            reflect.TypeFor[engram.PurgeCounts](),
		"Record":                 reflect.TypeFor[engram.Record](),
		"ImportResult":           reflect.TypeFor[engram.ImportResult](),
		"EmbeddingsRequest":      reflect.TypeFor[engramhttp.EmbeddingsRequest](),
		"EmbeddingsResponse":     reflect.TypeFor[engramhttp.EmbeddingsResponse](),
		"Embedding":              reflect.TypeFor[engramhttp.EmbeddingData](),
		"EmbeddingsUsage":        reflect.TypeFor[engramhttp.EmbeddingsUsage](),
		"APIKey":                 reflect.TypeFor[engram.APIKey](),
		"KeySpec":                reflect.TypeFor[engram.KeySpec](),
		"Entity":                 reflect.TypeFor[engram.Entity](),
		"EntityPage":             reflect.TypeFor[engram.EntityPage](),
		"EntityDetail":           reflect.TypeFor[engram.EntityDetail](),
		"Relation":               reflect.TypeFor[engram.Relation](),
		"Evidence":               reflect.TypeFor[engram.Evidence](),
		"TimelineEntry":          reflect.TypeFor[engram.TimelineEntry](),
		"Graph":                  reflect.TypeFor[engram.Graph](),
		"Resource":               reflect.TypeFor[engram.Resource](),
		"ResourcePage":           reflect.TypeFor[engram.ResourcePage](),
		"ResourceCitation":       reflect.TypeFor[engram.ResourceCitation](),
		"MediaSpan":              reflect.TypeFor[engram.MediaSpan](),
		"ObservationInput":       reflect.TypeFor[engram.ObservationInput](),
		"AddObservationsRequest": reflect.TypeFor[engram.AddObservationsRequest](),
		"AddObservationsResult":  reflect.TypeFor[engram.AddObservationsResult](),
		"Observation":            reflect.TypeFor[engram.Observation](),
		"Identity":               reflect.TypeFor[engram.Identity](),
		"IdentityDetail":         reflect.TypeFor[engram.IdentityDetail](),
		"IdentityList":           reflect.TypeFor[engramhttp.IdentityList](),
		"Person":                 reflect.TypeFor[engram.Person](),
		"PersonList":             reflect.TypeFor[engramhttp.PersonList](),
		"LinkRequest":            reflect.TypeFor[engram.LinkRequest](),
		"IdentityMergeRequest":   reflect.TypeFor[engram.IdentityMergeRequest](),
		"IdentitySplitRequest":   reflect.TypeFor[engram.IdentitySplitRequest](),
		"SplitRequest":           reflect.TypeFor[engram.SplitRequest](),
		"IdentityEvent":          reflect.TypeFor[engram.IdentityEvent](),
		"IdentityHistory":        reflect.TypeFor[engramhttp.IdentityHistory](),
		"Media":                  reflect.TypeFor[engram.Media](),
		"Job":                    reflect.TypeFor[engram.Job](),
		"JobPage":                reflect.TypeFor[engram.JobPage](),
		"BreakerStatus":          reflect.TypeFor[engram.BreakerStatus](),
		"TranscriptSegment":      reflect.TypeFor[engram.TranscriptSegment](),
		"SensitiveCount":         reflect.TypeFor[engram.SensitiveCount](),
		"SensitivePolicy":        reflect.TypeFor[engram.SensitivePolicy](),
		"TenantPolicy":           reflect.TypeFor[engram.TenantPolicy](),
		"SensitiveScan":          reflect.TypeFor[engram.SensitiveScan](),
		"SensitiveFound":         reflect.TypeFor[engram.SensitiveFound](),
	} {
		sch, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("components.schemas has no %s", name)
			continue
		}
		var want []string
		for i := range typ.NumField() {
			tag := typ.Field(i).Tag.Get("json")
			field, _, _ := strings.Cut(tag, ",")
			if field != "" && field != "-" {
				want = append(want, field)
			}
		}
		var got []string
		for p := range sch.Properties {
			got = append(got, p)
		}
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("schema %s has properties %v, want the JSON fields of %s: %v", name, got, typ, want)
		}
		for _, r := range sch.Required {
			if _, ok := sch.Properties[r]; !ok {
				t.Errorf("schema %s requires %s, which it does not define", name, r)
			}
		}
	}
}
