package engine

import (
	"fmt"
	"maps"
	"slices"
)

// The string values of a record's metadata are texts its writer brought
// as much as its content: a client may keep a note, a header or a form
// field there. They are scanned and treated with the record's other texts,
// numbered after them, each named by its path ("metadata.note",
// "metadata.tags[1]"); keys are left as they are.

// metaWalk gathers the string values of a metadata copy as record fields,
// and what writes their treated texts back into the copy.
type metaWalk struct {
	fields []recordField
	puts   []func()
}

// metaFields replaces *md by a copy (its objects and arrays copied, so the
// caller's stays as given) and returns a field for each string value in
// it, keys in sorted order, and the function that writes the fields' texts
// back into the copy once treated. Empty metadata is left as it is.
func metaFields(md *map[string]any) ([]recordField, func()) {
	if len(*md) == 0 {
		return nil, nil
	}
	mw := &metaWalk{}
	c, _ := mw.copy("metadata", *md)
	*md = c.(map[string]any)
	return mw.fields, mw.write
}

// metaStrings returns the string values of md, in the order metaFields
// numbers them.
func metaStrings(md map[string]any) []string {
	fs, _ := metaFields(&md)
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = *f.text
	}
	return out
}

func (mw *metaWalk) write() {
	for _, put := range mw.puts {
		put()
	}
}

// copy returns a copy of v, and for a string the text its field holds.
func (mw *metaWalk) copy(path string, v any) (any, *string) {
	switch x := v.(type) {
	case string:
		p := new(string)
		*p = x
		mw.fields = append(mw.fields, recordField{path, p})
		return x, p
	case map[string]any:
		c := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			cv, p := mw.copy(path+"."+k, x[k])
			c[k] = cv
			if p != nil {
				mw.puts = append(mw.puts, func() { c[k] = *p })
			}
		}
		return c, nil
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			cv, p := mw.copy(fmt.Sprintf("%s[%d]", path, i), e)
			c[i] = cv
			if p != nil {
				mw.puts = append(mw.puts, func() { c[i] = *p })
			}
		}
		return c, nil
	case map[string]string:
		c := make(map[string]string, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := new(string)
			*p, c[k] = x[k], x[k]
			mw.fields = append(mw.fields, recordField{path + "." + k, p})
			mw.puts = append(mw.puts, func() { c[k] = *p })
		}
		return c, nil
	case []string:
		c := slices.Clone(x)
		for i := range c {
			mw.fields = append(mw.fields, recordField{fmt.Sprintf("%s[%d]", path, i), &c[i]})
		}
		return c, nil
	}
	return v, nil
}
