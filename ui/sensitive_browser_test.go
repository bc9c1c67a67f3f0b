package ui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowser_Sensitive: the dashboard's rendered pages (memories,
// timeline, audit) of a user who said a key, a card and a password, in
// English, Spanish and German, show the placeholders and never the
// values. The server has no vault key, so the spans are redacted.
func TestBrowser_Sensitive(t *testing.T) {
	chrome := findChromium(t)
	srv := startServer(t, true)
	ns := map[string]any{"org": "acme", "project": "app", "user": "erin"}
	spans := []string{"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "6011 0000 0000 0004", "Sommer2024!"}
	srv.call(t, "POST", "/v1/memories", map[string]any{"namespace": ns, "memories": []map[string]any{{"value": "my OpenAI key is " + spans[0]}}})
	srv.call(t, "POST", "/v1/episodes", map[string]any{"namespace": ns, "episodes": []map[string]any{
		{"role": "user", "content": "Mi tarjeta es " + spans[1] + " y caduca pronto"},
		{"role": "user", "content": "Das Passwort für den Router lautet: " + spans[2]},
	}})

	ctx := browser(t, chrome)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err := chromedp.Do(sctx, chromedp.Navigate(srv.url+"/"), chromedp.WaitVisible(chromedp.CSS(`main[data-page="tenants"] #tenants`)),
		chromedp.Click(chromedp.CSS(`#tenants tbody tr:first-child a.tenant`)),
		chromedp.WaitVisible(chromedp.CSS(`main[data-page="scopes"] #scopes`)),
		chromedp.Click(chromedp.CSS(`#scopes tbody tr:first-child td:first-child a`)),
		chromedp.WaitVisible(chromedp.CSS(`main[data-page="memories"] #memories`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("#memories tbody").textContent.includes("[secret:api_key#1]")`))
	if err != nil {
		text, _ := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(`main`)))
		t.Fatalf("erin's memories with the key's placeholder: %v (page: %q)", err, text)
	}
	for _, p := range []struct{ name, hash, shows string }{
		{"memories", "#/memories?user=erin", "[secret:api_key#1]"},
		{"timeline", "#/timeline?user=erin", "[payment:card#1]"},
		{"audit", "#/audit?user=erin", "sensitive"},
	} {
		err := chromedp.Do(sctx, chromedp.Navigate(srv.url+"/ui/"+p.hash), chromedp.WaitVisible(chromedp.CSS(`main[data-page="`+p.name+`"]`)),
			chromedp.Poll[chromedp.Void](`document.querySelector("main").innerText.includes(`+jsString(p.shows)+`)`))
		text, _ := chromedp.Run(sctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		if err != nil {
			t.Errorf("page %s does not show %q: %v", p.name, p.shows, err)
			continue
		}
		for _, span := range spans {
			if strings.Contains(text, span) {
				t.Errorf("page %s holds %q", p.name, span)
			}
		}
	}
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
