package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/jsonbody"
)

// decodeJSON decodes exactly one JSON value from r into v. Unknown fields,
// wrong types and anything after the value are errors; numbers in untyped
// places (metadata) stay json.Number so they round-trip losslessly. what
// names the input in error messages ("request body", "line 3"), and an
// error inside the value names its JSON path too, as in
// "request body: episodes[1].occurred_at: ...".
func decodeJSON(r io.Reader, v any, what string) error { return decodeJSONFor(nil, r, v, what) }

// decodeBody decodes the JSON body of a request into v as decodeJSON does,
// and refuses namespaces outside the binding of the request's key.
func decodeBody(r *http.Request, v any) error {
	err := decodeJSONFor(keyFrom(r.Context()), r.Body, v, "request body")
	if err == nil {
		noteBodyTenant(r.Context(), v)
	}
	return err
}

// decodeJSONFor is decodeJSON checking the namespaces in v against the
// binding of the key k (nil: no key).
func decodeJSONFor(k *engram.APIKey, r io.Reader, v any, what string) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return bodyError(what, err)
	}
	if err := jsonbody.CheckUTF8(b); err != nil {
		return engram.Errorf(engram.EINVALID, "%s: %v", what, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var syntaxErr *json.SyntaxError
		switch {
		case errors.Is(err, io.EOF):
			err = errEmptyBody
		case errors.Is(err, io.ErrUnexpectedEOF):
			err = errUnexpectedEnd
		case errors.As(err, &syntaxErr):
		default:
			if path, perr := locate(b, reflect.TypeOf(v), ""); path != "" {
				return bodyErrorAt(what, path, perr)
			}
		}
		return bodyError(what, err)
	}
	// A second value, or garbage, after the first is a malformed request,
	// not something to ignore silently.
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return bodyError(what, err)
		}
		return engram.Errorf(engram.EINVALID, "%s has more data after the JSON value (at byte %d)", what, dec.InputOffset())
	}
	return bindNames(reflect.ValueOf(v), k)
}

// strictDecode decodes raw into a new value of type t as decodeJSON does.
func strictDecode(raw []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	return dec.Decode(reflect.New(t).Interface())
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// locate finds where in raw, a JSON value for type t at path, decoding
// fails: it decodes the fields of objects and the items of arrays one by
// one and returns the path of the innermost value that fails, with that
// value's error; "" when raw decodes. encoding/json names the fields of a
// failing value but not the array indices, which a batch needs.
func locate(raw []byte, t reflect.Type, path string) (string, error) {
	err := strictDecode(raw, t)
	if err == nil {
		return "", nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return path, err
	}
	switch t.Kind() {
	case reflect.Struct:
		dec := json.NewDecoder(bytes.NewReader(raw))
		if tok, terr := dec.Token(); terr != nil || tok != json.Delim('{') {
			return path, err
		}
		fields := reflect.VisibleFields(t)
		for dec.More() {
			tok, terr := dec.Token()
			key, ok := tok.(string)
			var val json.RawMessage
			if terr != nil || !ok || dec.Decode(&val) != nil {
				return path, err
			}
			f, ok := jsonField(fields, key)
			if !ok {
				return path, fmt.Errorf("json: unknown field %q", key)
			}
			if p, ferr := locate(val, f.Type, joinPath(path, key)); ferr != nil {
				return p, ferr
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return path, err
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return path, err
		}
		for i, it := range items {
			if p, ierr := locate(it, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); ierr != nil {
				return p, ierr
			}
		}
	}
	return path, err
}

// jsonField finds the struct field that encoding/json decodes key into:
// the exact name first, then one equal under case folding.
func jsonField(fields []reflect.StructField, key string) (reflect.StructField, bool) {
	var folded reflect.StructField
	found := false
	for _, f := range fields {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (name == "" && f.Anonymous) {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return f, true
		}
		if !found && strings.EqualFold(name, key) {
			folded, found = f, true
		}
	}
	return folded, found
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// bodyErrorAt is bodyError for an error at a JSON path inside the input.
func bodyErrorAt(what, path string, err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return engram.Errorf(engram.EINVALID, "%s: %s must be %s, not %s", what, path, jsonTypeName(typeErr.Type), typeErr.Value)
	}
	return bodyError(what+": "+path, err)
}

var (
	namespaceType = reflect.TypeFor[engram.Namespace]()
	scopeType     = reflect.TypeFor[engram.Scope]()
)

// bindNames puts every namespace and scope reachable from v through struct
// fields, pointers and slices in Unicode NFC, so that two spellings of one
// name never reach the service as two namespaces, and checks each against
// the binding of the key k (nil: no key), returning the first refusal.
func bindNames(v reflect.Value, k *engram.APIKey) error {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return bindNames(v.Elem(), k)
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil
		}
		for i := range v.Len() {
			if err := bindNames(v.Index(i), k); err != nil {
				return err
			}
		}
	case reflect.Struct:
		switch {
		case !v.CanSet():
		case v.Type() == namespaceType:
			n := v.Interface().(engram.Namespace).Normalize()
			v.Set(reflect.ValueOf(n))
			return checkBinding(k, n)
		case v.Type() == scopeType:
			sc := v.Interface().(engram.Scope).Normalize()
			v.Set(reflect.ValueOf(sc))
			return checkBinding(k, sc.Namespace())
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if err := bindNames(v.Field(i), k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// decodeOptionalBody is decodeBody for bodies that may be empty, which
// leave v unchanged.
func decodeOptionalBody(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return bodyError("request body", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return decodeJSONFor(keyFrom(r.Context()), bytes.NewReader(b), v, "request body")
}

// param describes a query parameter an endpoint accepts. A name ending in
// ".{key}" is a family: every parameter starting with the part before
// "{key}" belongs to it, and the rest of the name is the key.
type param struct {
	name     string
	repeated bool
}

func (p param) prefix() (string, bool) {
	return strings.CutSuffix(p.name, "{key}")
}

// query holds the checked query parameters of a request.
type query struct {
	v   url.Values
	key *engram.APIKey // the request's API key, whose binding scope checks
}

// parseQuery parses the raw query and checks every parameter against the
// endpoint's list: unknown names (usually typos that would otherwise be
// silently ignored) and repeated single-valued ones are errors.
func parseQuery(raw string, params []param) (query, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return query{}, engram.Errorf(engram.EINVALID, "the query string is malformed: %v", err)
	}
	var unknown []string
	for name, vals := range v {
		p, ok := lookupParam(params, name)
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		if !p.repeated && len(vals) > 1 {
			return query{}, engram.Errorf(engram.EINVALID, "query parameter %s is given %d times; it takes one value", name, len(vals))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		names := make([]string, len(params))
		for i, p := range params {
			names[i] = p.name
		}
		accepted := "none"
		if len(names) > 0 {
			accepted = strings.Join(names, ", ")
		}
		word := "parameter"
		if len(unknown) > 1 {
			word = "parameters"
		}
		return query{}, engram.Errorf(engram.EINVALID, "unknown query %s %s; this endpoint accepts: %s",
			word, strings.Join(quoteAll(unknown), ", "), accepted)
	}
	return query{v: v}, nil
}

func lookupParam(params []param, name string) (param, bool) {
	for _, p := range params {
		if prefix, ok := p.prefix(); ok {
			if len(name) > len(prefix) && strings.HasPrefix(name, prefix) {
				return p, true
			}
		} else if p.name == name {
			return p, true
		}
	}
	return param{}, false
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// str returns a single-valued parameter, "" when absent.
func (q query) str(name string) string { return q.v.Get(name) }

// list returns the non-empty values of a repeatable parameter.
func (q query) list(name string) []string {
	var out []string
	for _, s := range q.v[name] {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// time parses an RFC 3339 time parameter; absent or empty gives nil.
func (q query) time(name string) (*time.Time, error) {
	s := q.v.Get(name)
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		hint := ""
		if strings.Contains(s, " ") {
			hint = " (a '+' in a query string must be written %2B)"
		}
		return nil, engram.Errorf(engram.EINVALID, "query parameter %s %q is not a time in RFC 3339 format, e.g. 2024-05-01T12:00:00Z%s", name, s, hint)
	}
	return &t, nil
}

// int parses an integer parameter; absent or empty gives 0.
func (q query) int(name string) (int, error) {
	s := q.v.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, engram.Errorf(engram.EINVALID, "query parameter %s %q is not a whole number", name, s)
	}
	return n, nil
}

// bool parses a boolean parameter; absent or empty gives false.
func (q query) bool(name string) (bool, error) {
	s := q.v.Get(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, engram.Errorf(engram.EINVALID, "query parameter %s %q is not true or false", name, s)
	}
	return b, nil
}

// scope reads the scope parameters, names in Unicode NFC; EFORBIDDEN when
// they are outside the binding of the request's key. Whether they form a
// valid scope (org and project present, names well formed) is for the
// service to say.
func (q query) scope() (engram.Scope, error) {
	shared, err := q.bool("include_shared")
	if err != nil {
		return engram.Scope{}, err
	}
	sc := engram.Scope{
		Org:           q.str("org"),
		Project:       q.str("project"),
		User:          q.str("user"),
		Agent:         q.str("agent"),
		Session:       q.str("session"),
		IncludeShared: shared,
	}.Normalize()
	return sc, checkBinding(q.key, sc.Namespace())
}

// meta reads the family prefix+KEY=VALUE into a map, nil if there is none.
// A VALUE that is valid JSON is decoded (numbers as json.Number), anything
// else is taken as a string; so meta.n=3 is the number 3, meta.n="3" the
// string "3" and meta.city=Paris the string "Paris".
func (q query) meta(prefix string) (map[string]any, error) {
	var m map[string]any
	for name, vals := range q.v {
		key, ok := strings.CutPrefix(name, prefix)
		if !ok || key == "" {
			continue
		}
		v, err := metaValue(name, vals[0])
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = make(map[string]any)
		}
		m[key] = v
	}
	return m, nil
}

// metaIn reads the repeatable family prefix+KEY=VALUE into lists of
// accepted values per key.
func (q query) metaIn(prefix string) (map[string][]any, error) {
	var m map[string][]any
	for name, vals := range q.v {
		key, ok := strings.CutPrefix(name, prefix)
		if !ok || key == "" {
			continue
		}
		for _, s := range vals {
			v, err := metaValue(name, s)
			if err != nil {
				return nil, err
			}
			if m == nil {
				m = make(map[string][]any)
			}
			m[key] = append(m[key], v)
		}
	}
	return m, nil
}

func metaValue(name, s string) (any, error) {
	if !utf8.ValidString(s) {
		return nil, engram.Errorf(engram.EINVALID, "query parameter %s is not valid UTF-8", name)
	}
	if !json.Valid([]byte(s)) {
		return s, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return s, nil
	}
	return v, nil
}

// encodeMetaValue is the inverse of metaValue, for the client: strings that
// would parse as JSON are sent quoted so they stay strings.
func encodeMetaValue(v any) (string, error) {
	if s, ok := v.(string); ok {
		if !json.Valid([]byte(s)) {
			return s, nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
