package sqlite_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/storetest"
)

// crashEnv tells a re-executed test binary to act as the crash test's child
// and names the database it writes.
const crashEnv = "ENGRAM_SQLITE_CRASH_CHILD"

// TestCrashChild is the child process of TestCrashKeepsAcknowledgedWrites:
// it commits an episode and a memory per Update, forever, and prints an
// acknowledgement line after each Update returns.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("run as a child process by TestCrashKeepsAcknowledgedWrites")
	}
	round := os.Getenv(crashEnv + "_ROUND")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		tok := fmt.Sprintf("r%sn%d", round, i)
		e := storetest.Episode(nsU1, "crash episode "+tok)
		m := storetest.Memory(nsU1, "crash memory "+tok)
		err := db.Update(ctx, func(tx engram.Tx) error {
			if err := tx.InsertEpisode(ctx, e); err != nil {
				return err
			}
			if err := tx.InsertMemory(ctx, m); err != nil {
				return err
			}
			return tx.InsertVersion(ctx, storetest.Version(m, 1, engram.OpAdd))
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "update:", err)
			os.Exit(3)
		}
		// os.Stdout is unbuffered: the line is out before the next write starts.
		fmt.Printf("ack %s %s %s\n", tok, e.ID, m.ID)
	}
}

type ack struct{ tok, episode, memory string }

// TestCrashKeepsAcknowledgedWrites kills a writing child process with
// SIGKILL at an arbitrary point, several times over, and checks after each
// kill that every write it acknowledged is there, searchable, and that the
// file passes IntegrityCheck.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	const rounds, acksPerRound = 3, 100
	path := filepath.Join(t.TempDir(), "crash.db")
	var acked []ack
	for round := range rounds {
		acked = append(acked, runCrashChild(t, path, round, acksPerRound)...)

		db, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
		}
		if err := db.IntegrityCheck(ctx); err != nil {
			t.Errorf("round %d: %v", round, err)
		}
		missing := verifyAcks(t, db, acked)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if missing > 0 {
			t.Fatalf("round %d: %d of %d acknowledged writes lost", round, missing, len(acked))
		}
	}
}

// verifyAcks checks that every acknowledged episode, memory and version is
// stored and in the text indexes, and returns how many acks are missing
// something. It reads in bulk: per-ack queries are slow under -race.
func verifyAcks(t *testing.T, db *sqlite.DB, acked []ack) int {
	t.Helper()
	episodes, memories, versions := map[string]string{}, map[string]string{}, map[string]int{}
	err := db.View(ctx, func(r engram.Reader) error {
		return r.Export(ctx, scU1, func(rec engram.Record) error {
			switch rec.Type {
			case engram.RecordEpisode:
				episodes[rec.Episode.ID] = rec.Episode.Content
			case engram.RecordMemory:
				memories[rec.Memory.ID] = rec.Memory.Value
			case engram.RecordVersion:
				versions[rec.Version.MemoryID]++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	// One OR-query over every ack's unique token per index.
	var terms []string
	for _, a := range acked {
		terms = append(terms, `"`+a.tok+`"`)
	}
	match := strings.Join(terms, " OR ")
	raw := rawDB(t, db)
	defer raw.Close()
	indexed := func(q string) map[string]bool {
		rows, err := raw.Query(q, match)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		ids := map[string]bool{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids[id] = true
		}
		return ids
	}
	memIndexed := indexed("SELECT m.id FROM memories_fts JOIN memories m ON m.rid = memories_fts.rowid WHERE memories_fts MATCH ?")

	missing := 0
	for _, a := range acked {
		ok := episodes[a.episode] == "crash episode "+a.tok && memories[a.memory] == "crash memory "+a.tok &&
			versions[a.memory] == 1 && memIndexed[a.memory]
		if !ok {
			missing++
			t.Errorf("acknowledged write %s: episode %q, memory %q (indexed %v), %d versions", a.tok,
				episodes[a.episode], memories[a.memory], memIndexed[a.memory], versions[a.memory])
		}
	}
	// And through the interface, for the newest acks, the ones a crash
	// would most likely lose.
	for _, a := range acked[max(0, len(acked)-5):] {
		hits := search(t, db, a.tok, engram.MemoryFilter{})
		if len(hits) != 1 || hits[0].Memory.ID != a.memory {
			t.Errorf("SearchText(%q) = %v, want [%s]", a.tok, hitIDs(hits), a.memory)
		}
	}
	return missing
}

// runCrashChild starts the child on path, reads n acknowledgements, kills
// it with SIGKILL, and returns what it acknowledged.
func runCrashChild(t *testing.T, path string, round, n int) []ack {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path, crashEnv+"_ROUND="+strconv.Itoa(round))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var acks []ack
	timeout := time.After(60 * time.Second)
	for len(acks) < n {
		select {
		case l, ok := <-lines:
			if !ok {
				cmd.Wait()
				t.Fatalf("child exited after %d acks: %s", len(acks), stderr.String())
			}
			f := strings.Fields(l)
			if len(f) != 4 || f[0] != "ack" {
				continue // test framework chatter
			}
			acks = append(acks, ack{tok: f[1], episode: f[2], memory: f[3]})
		case <-timeout:
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child acknowledged only %d writes in 60s: %s", len(acks), stderr.String())
		}
	}
	// Process.Kill sends SIGKILL: no deferred function or exit handler runs.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range lines {
		}
	}()
	_ = cmd.Wait()
	return acks
}
