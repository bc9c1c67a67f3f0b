package jsonbody

import (
	"errors"
	"testing"
)

func TestCheckUTF8(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		path string // "-" when valid
	}{
		{"valid", `{"namespace":{"org":"a","user":"zoë 张伟"}}`, "-"},
		{"user", "{\"namespace\":{\"org\":\"a\",\"user\":\"al\xffice\"}}", "namespace.user"},
		{"array element", "{\"episodes\":[{\"content\":\"ok\"},{\"role\":\"user\",\"content\":\"x\xc3\x28\"}]}", "episodes[1].content"},
		{"key", "{\"metadata\":{\"k\xfe\":1}}", "metadata.k\ufffd"},
		{"after nested", "{\"a\":[1,[2,3],{\"b\":null}],\"c\":\"\xed\xa0\x80\"}", "c"},
		{"top string", "\"\xff\"", ""},
		{"not json", "hello \xff", ""},
		{"pair", `{"q":"\ud83d\ude00 and \\ud800 and \u00e9"}`, "-"},
		{"lone high", `{"namespace":{"user":"a\ud800b"}}`, "namespace.user"},
		{"lone low", `{"q":["x","\udc00"]}`, "q[1]"},
		{"high then other escape", `{"q":"\ud800\u0041"}`, "q"},
		{"high at end", `{"q":"\ud800"}`, "q"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckUTF8([]byte(tc.body))
			if tc.path == "-" {
				if err != nil {
					t.Fatalf("CheckUTF8 = %v, want nil", err)
				}
				return
			}
			var bad *InvalidUTF8
			if !errors.As(err, &bad) {
				t.Fatalf("CheckUTF8 = %v, want *InvalidUTF8", err)
			}
			if bad.Path != tc.path {
				t.Errorf("path = %q, want %q (%v)", bad.Path, tc.path, err)
			}
		})
	}
}
