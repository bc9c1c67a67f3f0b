package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of Run. Its JSON form is report.json.
type Report struct {
	Bench   string                   `json:"bench"`
	Systems map[string]*SystemReport `json:"systems"`
	Run     RunInfo                  `json:"run"`
	// Questions holds per-question rankings and scores, written to
	// questions.jsonl rather than report.json.
	Questions []QuestionResult `json:"-"`
}

// SystemReport is one system's results. A level is nil when the benchmark
// has no such level; LatencyMS and IngestPerS are nil for "full", which
// neither stores nor searches.
type SystemReport struct {
	// Unavailable, when set, says why the system could not run; nothing
	// else is reported for it.
	Unavailable   string       `json:"unavailable,omitempty"`
	Note          string       `json:"note,omitempty"`
	Turn          *LevelReport `json:"turn,omitempty"`
	Session       *LevelReport `json:"session,omitempty"`
	LatencyMS     *Latency     `json:"latency_ms"`
	PoolLatencyMS *Latency     `json:"pool_latency_ms,omitempty"`
	IngestPerS    *float64     `json:"ingest_per_s"`
	LLM           *LLMReport   `json:"llm,omitempty"`
}

func (sr *SystemReport) levels(m map[string]*levelAcc) {
	if a := m[LevelTurn]; a != nil {
		sr.Turn = a.report()
	}
	if a := m[LevelSession]; a != nil {
		sr.Session = a.report()
	}
}

// Level returns the named level's report, or nil.
func (sr *SystemReport) Level(level string) *LevelReport {
	switch level {
	case LevelTurn:
		return sr.Turn
	case LevelSession:
		return sr.Session
	}
	return nil
}

// LevelReport holds mean metrics over all scored questions and per
// category (LoCoMo category number, LongMemEval question type).
type LevelReport struct {
	Overall    map[string]float64            `json:"overall"`
	ByCategory map[string]map[string]float64 `json:"by_category"`
}

// Latency holds search latency percentiles in milliseconds over N calls.
type Latency struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	N   int     `json:"n"`
}

// RunInfo says what was run, on what, and how long it took.
type RunInfo struct {
	Former     *FormerInfo               `json:"former,omitempty"` // nil: the rules
	Date       time.Time                 `json:"date"`
	DataFile   string                    `json:"data_file"`
	DataSHA256 string                    `json:"data_sha256"`
	Limit      int                       `json:"limit"`
	Only       []int                     `json:"only,omitempty"` // haystack indexes kept, when selected
	Now        string                    `json:"now"`            // what searches passed as SearchRequest.Now
	Mode       string                    `json:"mode,omitempty"` // the search mode, when not one-shot
	Haystacks  int                       `json:"haystacks"`
	Episodes   int                       `json:"episodes"`
	Questions  int                       `json:"questions"`
	Scored     map[string]int            `json:"scored"`  // per level
	Skipped    map[string]map[string]int `json:"skipped"` // per level, per reason
	Parse      parseNotes                `json:"parse"`
	K          int                       `json:"k"`
	PoolK      int                       `json:"pool_k"`
	Ks         []int                     `json:"recall_ks"`
	Budgets    []int                     `json:"budgets"`
	Tokenizer  string                    `json:"tokenizer"`
	Cores      int                       `json:"cores"`
	GoVersion  string                    `json:"go_version"`
	OSArch     string                    `json:"os_arch"`
	DurationS  float64                   `json:"duration_s"`
}

// QuestionResult is one question's outcome per system.
type QuestionResult struct {
	ID       string                     `json:"id"`
	Haystack string                     `json:"haystack"`
	Category string                     `json:"category"`
	Skip     string                     `json:"skip,omitempty"`
	Systems  map[string]*QuestionSystem `json:"systems"`
}

// QuestionSystem is one system's answer to one question: the turn keys each
// of its top K hits cites, and its scores per level (absent when the
// question is not scored at that level).
type QuestionSystem struct {
	Ranked [][]string                    `json:"ranked,omitempty"`
	Scores map[string]map[string]float64 `json:"scores,omitempty"`
	LLM    *QuestionLLM                  `json:"llm,omitempty"`
}

// Levels returns the levels this report's benchmark is scored at.
func (r *Report) Levels() []string {
	if r.Bench == BenchLongMemEval {
		return []string{LevelSession, LevelTurn}
	}
	return []string{LevelTurn}
}

// systemNames returns the report's systems in report order.
func (r *Report) systemNames() []string {
	var out []string
	for _, s := range AllSystems {
		if _, ok := r.Systems[s]; ok {
			out = append(out, s)
		}
	}
	return out
}

// metricOrder lists the metrics in reading order.
func metricOrder() []string {
	var out []string
	for _, k := range recallKs {
		out = append(out, recallName(k))
	}
	for _, k := range recallKs {
		out = append(out, allName(k))
	}
	out = append(out, ndcgName(), metricMRR)
	for _, b := range budgets {
		out = append(out, budgetRecallName(b))
	}
	for _, b := range budgets {
		out = append(out, budgetTokensName(b))
	}
	return append(out, metricContextTokens, metricHitTokens, metricQuestions)
}

// WriteFiles writes report.json, report.md, questions.jsonl and the SVG
// plots into dir, creating it if needed.
func (r *Report) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	files := map[string][]byte{
		"report.json": append(b, '\n'),
		"report.md":   []byte(r.Markdown()),
	}
	for name, svg := range r.plots() {
		files[name] = []byte(svg)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return r.writeQuestions(filepath.Join(dir, "questions.jsonl"))
}

func (r *Report) writeQuestions(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write questions: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := range r.Questions {
		if err := enc.Encode(&r.Questions[i]); err != nil {
			f.Close()
			return fmt.Errorf("write questions: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write questions: %w", err)
	}
	return f.Close()
}

// value returns a system's overall metric at a level and whether it exists.
func (r *Report) value(system, level, metric string) (float64, bool) {
	sr := r.Systems[system]
	if sr == nil || sr.Unavailable != "" {
		return 0, false
	}
	lr := sr.Level(level)
	if lr == nil {
		return 0, false
	}
	v, ok := lr.Overall[metric]
	return v, ok
}

func fmtMetric(metric string, v float64) string {
	if strings.HasPrefix(metric, metricContextTokens) || metric == metricHitTokens || metric == metricQuestions {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
}

// Summary returns a plain-text table of the overall metrics of every
// system side by side, with engram's ratio to bm25, for a terminal.
func (r *Report) Summary() string {
	var sb strings.Builder
	names := r.systemNames()
	fmt.Fprintf(&sb, "%s: %d questions over %d haystacks, %d episodes, %.1fs\n",
		r.Bench, r.Run.Questions, r.Run.Haystacks, r.Run.Episodes, r.Run.DurationS)
	if r.Run.Now != "" {
		fmt.Fprintf(&sb, "search \"now\": %s\n", r.Run.Now)
	}
	if r.Run.Mode != "" {
		fmt.Fprintf(&sb, "search mode: %s\n", r.Run.Mode)
	}
	if f := r.Run.Former; f != nil {
		fmt.Fprintf(&sb, "former: %s", f.Name)
		if f.LLM != nil {
			fmt.Fprintf(&sb, ", %d LLM calls, %.2f calls and %.0f tokens per added turn", f.LLM.Calls, f.CallsPerTurn, f.TokensPerTurn)
		}
		sb.WriteString("\n")
	}
	for _, level := range r.Levels() {
		fmt.Fprintf(&sb, "\n%s level (%d questions scored)\n", level, r.Run.Scored[level])
		tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "metric\t")
		for _, s := range names {
			fmt.Fprintf(tw, "%s\t", s)
		}
		fmt.Fprint(tw, "engram/bm25\t\n")
		for _, m := range summaryMetrics() {
			fmt.Fprintf(tw, "%s\t", m)
			for _, s := range names {
				if v, ok := r.value(s, level, m); ok {
					fmt.Fprintf(tw, "%s\t", fmtMetric(m, v))
				} else {
					fmt.Fprint(tw, "–\t")
				}
			}
			e, ok1 := r.value(SystemEngram, level, m)
			b, ok2 := r.value(SystemBM25, level, m)
			if ok1 && ok2 {
				fmt.Fprintf(tw, "%s\t\n", ratio(e, b))
			} else {
				fmt.Fprint(tw, "–\t\n")
			}
		}
		tw.Flush()
	}
	sb.WriteString("\n")
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "system\tsearch p50 ms\tp95 ms\tp99 ms\tingest/s\t\n")
	for _, s := range names {
		sr := r.Systems[s]
		if sr.LatencyMS != nil && sr.IngestPerS != nil {
			fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.0f\t\n", s, sr.LatencyMS.P50, sr.LatencyMS.P95, sr.LatencyMS.P99, *sr.IngestPerS)
		} else {
			fmt.Fprintf(tw, "%s\t–\t–\t–\t–\t\n", s)
		}
	}
	tw.Flush()
	for _, s := range names {
		if u := r.Systems[s].Unavailable; u != "" {
			fmt.Fprintf(&sb, "%s unavailable: %s\n", s, u)
		}
	}
	for _, s := range names {
		if l := r.Systems[s].LLM; l != nil {
			fmt.Fprintf(&sb, "\nLLM judge (%s, model %s): J = %.3f over %d answers, %d errors\n", s, l.Model, l.Overall.J, l.Overall.N, l.Errors)
		}
	}
	return sb.String()
}

func summaryMetrics() []string {
	out := []string{recallName(1), recallName(5), recallName(10), recallName(20), allName(10), ndcgName(), metricMRR}
	for _, b := range budgets {
		out = append(out, budgetRecallName(b))
	}
	for _, b := range budgets {
		out = append(out, budgetTokensName(b))
	}
	return append(out, metricContextTokens, metricHitTokens)
}

// Markdown returns report.md: run information, the systems side by side
// with ratios to bm25 and to the full history's tokens, per-category tables,
// latency and the plots.
func (r *Report) Markdown() string {
	var sb strings.Builder
	names := r.systemNames()
	r.runHeader(&sb, names)
	for _, level := range r.Levels() {
		r.overallTable(&sb, level, names)
		r.tokenRatios(&sb, level, names)
		r.categoryTables(&sb, level, names)
		fmt.Fprintf(&sb, "![recall at k](recall_at_k_%s.svg)\n![recall against context tokens](recall_vs_tokens_%s.svg)\n\n", level, level)
	}
	r.latencyTable(&sb, names)
	r.llmTables(&sb, names)
	sb.WriteString("Metric definitions are in the eval package documentation.\n")
	return sb.String()
}

// runHeader writes the title and what was run, on which data and machine,
// and the systems that were unavailable.
func (r *Report) runHeader(sb *strings.Builder, names []string) {
	ri := r.Run
	fmt.Fprintf(sb, "# engram eval: %s\n\n", r.Bench)
	fmt.Fprintf(sb, "- data: `%s` (sha256 `%s`), limit %d", ri.DataFile, ri.DataSHA256, ri.Limit)
	if len(ri.Only) > 0 {
		fmt.Fprintf(sb, ", only haystacks %v", ri.Only)
	}
	fmt.Fprintf(sb, "\n- search \"now\": %s\n", ri.Now)
	fmt.Fprintf(sb, "- %d haystacks, %d episodes, %d questions; scored per level: %s; skipped: %s\n",
		ri.Haystacks, ri.Episodes, ri.Questions, fmtCounts(ri.Scored), fmtSkipped(ri.Skipped))
	fmt.Fprintf(sb, "- malformed evidence strings %d, evidence ids dropped %d, empty turns skipped %d\n",
		ri.Parse.EvidenceMalformed, ri.Parse.EvidenceDropped, ri.Parse.TurnsSkipped)
	fmt.Fprintf(sb, "- ranked search k=%d, budget pool k=%d, tokens %s; %s, %s, %d cores; %s, %.1f s\n\n",
		ri.K, ri.PoolK, ri.Tokenizer, ri.GoVersion, ri.OSArch, ri.Cores, ri.Date.Format(time.RFC3339), ri.DurationS)
	for _, s := range names {
		if u := r.Systems[s].Unavailable; u != "" {
			fmt.Fprintf(sb, "- **%s unavailable**: %s\n", s, u)
		}
	}
	sb.WriteString("\n")
}

// overallTable writes every metric of every system at the level, with
// the ratio of engram to bm25.
func (r *Report) overallTable(sb *strings.Builder, level string, names []string) {
	fmt.Fprintf(sb, "## %s level, overall\n\n", level)
	sb.WriteString("| metric |")
	headRow(sb, names, "engram / bm25", "|---|")
	for _, m := range metricOrder() {
		fmt.Fprintf(sb, "| %s |", m)
		for _, s := range names {
			if v, ok := r.value(s, level, m); ok {
				fmt.Fprintf(sb, " %s |", fmtMetric(m, v))
			} else {
				sb.WriteString(" – |")
			}
		}
		e, ok1 := r.value(SystemEngram, level, m)
		b, ok2 := r.value(SystemBM25, level, m)
		if ok1 && ok2 && m != metricQuestions {
			fmt.Fprintf(sb, " %s |\n", ratio(e, b))
		} else {
			sb.WriteString(" – |\n")
		}
	}
	sb.WriteString("\n")
}

// latencyTable writes each system's search latencies and ingest rate.
func (r *Report) latencyTable(sb *strings.Builder, names []string) {
	sb.WriteString("## latency and ingest\n\n| system | search p50 ms | p95 ms | p99 ms | pool search p95 ms | ingest episodes/s |\n|---|---:|---:|---:|---:|---:|\n")
	for _, s := range names {
		sr := r.Systems[s]
		if sr.LatencyMS == nil || sr.IngestPerS == nil {
			fmt.Fprintf(sb, "| %s | – | – | – | – | – |\n", s)
			continue
		}
		pool := "–"
		if sr.PoolLatencyMS != nil {
			pool = fmt.Sprintf("%.2f", sr.PoolLatencyMS.P95)
		}
		fmt.Fprintf(sb, "| %s | %.2f | %.2f | %.2f | %s | %.0f |\n", s, sr.LatencyMS.P50, sr.LatencyMS.P95, sr.LatencyMS.P99, pool, *sr.IngestPerS)
	}
	sb.WriteString("\n")
}

// llmTables writes the judged answers of each system the LLM answered
// for, overall and by category.
func (r *Report) llmTables(sb *strings.Builder, names []string) {
	for _, s := range names {
		l := r.Systems[s].LLM
		if l == nil {
			continue
		}
		fmt.Fprintf(sb, "## LLM answers judged (%s, model %s, budget %d tokens)\n\n", s, l.Model, l.Budget)
		fmt.Fprintf(sb, "J = **%.3f** over %d answers (%d errors)\n\n| category | n | J |\n|---|---:|---:|\n", l.Overall.J, l.Overall.N, l.Errors)
		for _, c := range sortedKeys(l.ByCategory) {
			fmt.Fprintf(sb, "| %s | %d | %.3f |\n", c, l.ByCategory[c].N, l.ByCategory[c].J)
		}
		sb.WriteString("\n")
	}
}

// headRow ends a table's header row with a column for each of cols and
// one for last, then writes its alignment row: rule for the leading
// columns, then a right-aligned one for each of the others.
func headRow(sb *strings.Builder, cols []string, last, rule string) {
	for _, c := range cols {
		fmt.Fprintf(sb, " %s |", c)
	}
	fmt.Fprintf(sb, " %s |\n%s", last, rule)
	for range cols {
		sb.WriteString("---:|")
	}
	sb.WriteString("---:|\n")
}

// tokenRatios writes each system's budgeted context size against the full
// history's token count.
func (r *Report) tokenRatios(sb *strings.Builder, level string, names []string) {
	full, ok := r.value(SystemFull, level, metricContextTokens)
	if !ok || full == 0 {
		return
	}
	fmt.Fprintf(sb, "Full history: %.0f tokens per question on average. Context tokens as a share of it:\n\n| system |", full)
	cols := make([]string, len(budgets))
	for i, b := range budgets {
		cols[i] = fmt.Sprintf("@%d", b)
	}
	headRow(sb, cols, "top 10", "|---|")
	for _, s := range names {
		if s == SystemFull {
			continue
		}
		if _, ok := r.value(s, level, metricContextTokens); !ok {
			continue
		}
		fmt.Fprintf(sb, "| %s |", s)
		for _, b := range budgets {
			v, _ := r.value(s, level, budgetTokensName(b))
			fmt.Fprintf(sb, " %.1f%% |", 100*v/full)
		}
		v, _ := r.value(s, level, metricContextTokens)
		fmt.Fprintf(sb, " %.1f%% |\n", 100*v/full)
	}
	sb.WriteString("\n")
}

// categoryTables writes the key metrics of each category.
func (r *Report) categoryTables(sb *strings.Builder, level string, names []string) {
	cats := map[string]bool{}
	for _, s := range names {
		if sr := r.Systems[s]; sr.Unavailable == "" {
			if lr := sr.Level(level); lr != nil {
				for c := range lr.ByCategory {
					cats[c] = true
				}
			}
		}
	}
	metrics := []string{recallName(5), recallName(10), budgetRecallName(1000), budgetRecallName(2000)}
	fmt.Fprintf(sb, "### %s level by category\n\n| category | n | metric |", level)
	headRow(sb, names, "engram / bm25", "|---|---:|---|")
	for _, c := range sortedKeys(cats) {
		for _, m := range metrics {
			vals := map[string]float64{}
			n := 0.0
			for _, s := range names {
				if sr := r.Systems[s]; sr.Unavailable == "" {
					if lr := sr.Level(level); lr != nil {
						if cm, ok := lr.ByCategory[c]; ok {
							if v, ok := cm[m]; ok {
								vals[s] = v
							}
							n = cm[metricQuestions]
						}
					}
				}
			}
			fmt.Fprintf(sb, "| %s | %.0f | %s |", c, n, m)
			for _, s := range names {
				if v, ok := vals[s]; ok {
					fmt.Fprintf(sb, " %.3f |", v)
				} else {
					sb.WriteString(" – |")
				}
			}
			e, ok1 := vals[SystemEngram]
			b, ok2 := vals[SystemBM25]
			if ok1 && ok2 {
				fmt.Fprintf(sb, " %s |\n", ratio(e, b))
			} else {
				sb.WriteString(" – |\n")
			}
		}
	}
	sb.WriteString("\n")
}

func fmtCounts(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func fmtSkipped(m map[string]map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s (%s)", k, fmtCounts(m[k])))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
