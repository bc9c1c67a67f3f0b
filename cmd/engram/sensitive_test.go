package main_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestSensitiveAndScan: a turn added while the tenant keeps its findings
// is stored as said; engram scan reports it by kind and record (never the
// value); engram sensitive --set changes the tenant's policy, and engram
// scan --apply then treats what is stored, after which the episode holds
// the placeholder and a second scan finds nothing. Bad policies are usage
// errors naming where they came from.
func TestSensitiveAndScan(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	c := &cli{t: t, env: append(baseEnv(t), "ENGRAM_SENSITIVE=keep"), extra: []string{"--data", dir, "--org", "acme", "--project", "app"}}
	var res engram.AddEpisodesResult
	c.json(&res, "add", "--user", "ann", "Das Passwort für den Router lautet: Sommer2024!")
	id := res.Episodes[0].ID
	if res.Episodes[0].Content != "Das Passwort für den Router lautet: Sommer2024!" || res.Sensitive != nil {
		t.Fatalf("under keep the add stored %+v", res)
	}
	var rep engram.SensitiveScan
	c.json(&rep, "scan", "--user", "ann")
	if len(rep.Found) != 1 || rep.Found[0].Kind != "password" || rep.Found[0].Records[0] != id || rep.Treated != nil {
		t.Fatalf("scan = %+v", rep)
	}
	if out := c.ok("scan", "--user", "ann"); strings.Contains(out, "Sommer2024!") || !strings.Contains(out, id) {
		t.Errorf("scan printed %q", out)
	}
	if out := c.ok("sensitive", "--set", "secret=redact"); !strings.Contains(out, "secret=redact,payment=keep,id=keep,contact=keep") {
		t.Errorf("sensitive --set printed %q", out)
	}
	c.json(&rep, "scan", "--apply", "--user", "ann")
	if engram.SummarizeSensitive(rep.Treated) != "redacted password x2" { // the episode and the memory formed from it
		t.Errorf("scan --apply treated %+v", rep.Treated)
	}
	var eps engram.EpisodePage
	c.json(&eps, "list", "--episodes", "--user", "ann")
	if len(eps.Episodes) != 1 || eps.Episodes[0].Content != "Das Passwort für den Router lautet: [secret:password#1]" {
		t.Errorf("after scan --apply the episodes are %+v", eps.Episodes)
	}
	c.json(&rep, "scan", "--user", "ann")
	if len(rep.Found) != 0 {
		t.Errorf("a second scan found %+v", rep.Found)
	}
	if e := c.fail(2, "sensitive", "--set", "secret=hide"); !strings.Contains(e, "--set") || !strings.Contains(e, "secret") {
		t.Errorf("a bad --set: %q", e)
	}
	bad := &cli{t: t, env: append(baseEnv(t), "ENGRAM_SENSITIVE=contact=hide"), extra: []string{"--data", dir}}
	if e := bad.fail(2, "scan"); !strings.Contains(e, "ENGRAM_SENSITIVE") {
		t.Errorf("a bad ENGRAM_SENSITIVE: %q", e)
	}
}

// TestSensitiveOff: with ENGRAM_SENSITIVE=off a local add stores a card
// number as sent and reports nothing, and engram scan still finds it.
func TestSensitiveOff(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	c := &cli{t: t, env: append(baseEnv(t), "ENGRAM_SENSITIVE=off"), extra: []string{"--data", dir, "--org", "acme", "--project", "app"}}
	const said = "Mi tarjeta es 4111 1111 1111 1111, caduca en mayo."
	var res engram.AddEpisodesResult
	c.json(&res, "add", "--user", "eva", said)
	if res.Episodes[0].Content != said || res.Sensitive != nil {
		t.Fatalf("with detection off the add stored %+v", res)
	}
	var rep engram.SensitiveScan
	c.json(&rep, "scan", "--user", "eva")
	if len(rep.Found) != 1 || rep.Found[0].Kind != "card" {
		t.Errorf("scan with detection off = %+v, want the card", rep)
	}
}
