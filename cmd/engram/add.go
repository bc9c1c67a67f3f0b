package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/engramhq/engram"
)

var addCommand = &Command{
	Name:     "add",
	Synopsis: "add episodes (and the memories formed from them) or memories",
	Usage: `
Usage: engram add [flags] TEXT...
       engram add [flags] --file EPISODES.jsonl
       engram add --memory [flags] VALUE...
       engram add --memory [flags] --file MEMORIES.jsonl

Stores each TEXT as an episode in the namespace of --org, --project, --user,
--agent and --session, and forms memories from them unless --no-form is
given. With --async the episodes are stored with a job that forms their
memories in the background (engram serve runs it; engram jobs shows it).
With --memory each VALUE is stored as a memory as given, without
formation.

--media ID[:KIND[:START-END]] attaches a stored resource (engram resources
add) to the TEXT episodes as an image, audio or video (the kind defaults to
the resource's MIME type), with --caption or --transcript giving its text,
which is formed into memories; media without one are described by the
server's model endpoint when it has one, else stored and listed as
unformed. --role, --speaker, --modality, --occurred-at and --meta describe the TEXT
arguments (with --memory: --kind, --abstraction, --cue and the other memory
flags describe the VALUE arguments). Lines of --file ("-" for stdin) carry
their own fields: one episode input ({"role":"user","content":"..."}) or,
with --memory, one memory ({"kind":"semantic","value":"..."}) per line.

Everything in one invocation is stored in one transaction: on any error
nothing is stored.`,
	Run: runAdd,
}

func runAdd(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var af addFlags
	af.register(fs, m)
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 && af.file == "" {
		return cmdUsageErrorf(cmd, "nothing to add: give TEXT arguments or --file")
	}
	if err := checkAddMode(cmd, fs, af.memory); err != nil {
		return err
	}
	if af.memory {
		return m.addMemories(ctx, cmd, &af, pos)
	}
	return m.addEpisodes(ctx, cmd, fs, &af, pos)
}

// addFlags are the flags of engram add: those of both modes, the episode
// flags and the memory flags.
type addFlags struct {
	sf     storeFlags
	asJSON bool
	file   string
	memory bool
	meta   metaFlag

	// Episode flags.
	role       string
	speaker    string
	modality   string
	occurredAt timeFlag
	media      mediaFlags
	noForm     bool
	async      bool

	// Memory flags.
	mf memoryFlags
}

func (f *addFlags) register(fs *flag.FlagSet, m *Main) {
	f.sf.register(fs, m)
	fs.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fs.StringVar(&f.file, "file", "", "read inputs from a JSONL `file` (\"-\" for stdin)")
	fs.BoolVar(&f.memory, "memory", false, "add memories directly instead of episodes")
	fs.Var(&f.meta, "meta", "metadata `key=value` (repeatable; JSON values like 3 or true keep their type)")

	fs.StringVar(&f.role, "role", "", "episode role: user, assistant, system, tool, event")
	fs.StringVar(&f.speaker, "speaker", "", "episode speaker's `name`")
	fs.StringVar(&f.modality, "modality", "", "episode modality: text, image, audio, event")
	fs.Var(&f.occurredAt, "occurred-at", "episode event `time` (RFC 3339)")
	f.media.register(fs)
	fs.BoolVar(&f.noForm, "no-form", false, "store the episodes without forming memories")
	fs.BoolVar(&f.async, "async", false, "store the episodes with a background job that forms their memories (see engram jobs)")

	f.mf.register(fs, true)
}

// checkAddMode refuses a flag of the other mode, which would be ignored.
func checkAddMode(cmd *Command, fs *flag.FlagSet, memory bool) error {
	episodeOnly := []string{"role", "speaker", "modality", "occurred-at", "no-form", "async", "media", "caption", "transcript"}
	memoryOnly := []string{"kind", "abstraction", "cue", "language", "confidence", "importance", "valid-from", "valid-to", "expires-at", "source"}
	ignored, needs := episodeOnly, "episodes, not --memory"
	if !memory {
		ignored, needs = memoryOnly, "--memory"
	}
	for _, name := range ignored {
		if flagWasSet(fs, name) {
			return cmdUsageErrorf(cmd, "--%s applies to %s", name, needs)
		}
	}
	return nil
}

// addMemories stores the VALUE arguments and the lines of --file as
// memories and prints them.
func (m *Main) addMemories(ctx context.Context, cmd *Command, af *addFlags, values []string) error {
	mems := make([]engram.Memory, 0, len(values))
	for _, v := range values {
		mem := af.mf.memory()
		mem.Value = v
		mem.Metadata = af.meta
		mems = append(mems, mem)
	}
	if af.file != "" {
		if err := readInputFile(m, af.file, func(mem *engram.Memory) error {
			mems = append(mems, *mem)
			return nil
		}); err != nil {
			return err
		}
	}
	return af.sf.withService(ctx, cmd, m, openWrite, func(ctx context.Context, svc engram.Service) error {
		added, err := svc.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: af.sf.namespace(), Memories: mems})
		if err != nil {
			return err
		}
		if af.asJSON {
			return writeJSON(m.Stdout, struct {
				Memories []engram.Memory `json:"memories"`
			}{added})
		}
		for i := range added {
			fmt.Fprintf(m.Stdout, "memory   %s\n", memoryLine(&added[i]))
		}
		return nil
	})
}

// addEpisodes stores the TEXT arguments and the lines of --file as
// episodes and prints what was stored and formed.
func (m *Main) addEpisodes(ctx context.Context, cmd *Command, fs *flag.FlagSet, af *addFlags, texts []string) error {
	req, err := m.episodesRequest(fs, af, texts)
	if err != nil {
		return err
	}
	return af.sf.withService(ctx, cmd, m, openWrite, func(ctx context.Context, svc engram.Service) error {
		if err := resolveKinds(ctx, svc, req.Namespace, af.media.items); err != nil {
			return err
		}
		res, err := svc.AddEpisodes(ctx, req)
		if err != nil {
			return err
		}
		if af.asJSON {
			return writeJSON(m.Stdout, res)
		}
		m.printAdded(res)
		return nil
	})
}

// episodesRequest is the request adding the TEXT arguments, described by
// the episode flags, and the lines of --file.
func (m *Main) episodesRequest(fs *flag.FlagSet, af *addFlags, texts []string) (engram.AddEpisodesRequest, error) {
	eps := make([]engram.EpisodeInput, 0, len(texts))
	for _, text := range texts {
		eps = append(eps, engram.EpisodeInput{
			Role:       af.role,
			Speaker:    af.speaker,
			Content:    text,
			Modality:   engram.Modality(af.modality),
			OccurredAt: af.occurredAt.t,
			Metadata:   af.meta,
			Media:      af.media.items,
		})
	}
	req := engram.AddEpisodesRequest{Namespace: af.sf.namespace()}
	if af.file != "" {
		if err := readInputFile(m, af.file, func(in *engram.EpisodeInput) error {
			eps = append(eps, *in)
			return nil
		}); err != nil {
			return req, err
		}
	}
	req.Episodes = eps
	if af.noForm {
		form := false
		req.Form = &form
	}
	if flagWasSet(fs, "async") {
		req.Async = &af.async
	}
	return req, nil
}

// printAdded prints one line per episode stored, memory formed, job
// queued and medium left unformed.
func (m *Main) printAdded(res *engram.AddEpisodesResult) {
	for i := range res.Episodes {
		fmt.Fprintf(m.Stdout, "episode  %s\n", episodeLine(&res.Episodes[i]))
	}
	for i := range res.Memories {
		fmt.Fprintf(m.Stdout, "memory   %s\n", memoryLine(&res.Memories[i]))
	}
	if res.Job != nil {
		fmt.Fprintf(m.Stdout, "job      %s\n", jobLine(res.Job))
	}
	for _, u := range res.Unformed {
		fmt.Fprintf(m.Stdout, "unformed %s\n", u)
	}
}

// readInputFile decodes every line of a JSONL input into T.
func readInputFile[T any](m *Main, name string, fn func(*T) error) error {
	r, _, err := m.openInput(name)
	if err != nil {
		return err
	}
	defer r.Close()
	return readJSONL(r, inputName(name), func(v *T, _ int) error { return fn(v) })
}

// memoryFlags are the fields of a memory a command line can set; add
// --memory and update share them.
type memoryFlags struct {
	kind        string
	abstraction string
	cues        stringList
	language    string
	confidence  float64
	importance  float64
	validFrom   timeFlag
	validTo     timeFlag
	expiresAt   timeFlag
	sources     stringList
}

// register adds the memory flags to fs; --source only when withSources,
// because sources are fixed once a memory exists.
func (f *memoryFlags) register(fs *flag.FlagSet, withSources bool) {
	fs.StringVar(&f.kind, "kind", "", "memory kind: core, episodic, semantic, procedural, resource, vault")
	fs.StringVar(&f.abstraction, "abstraction", "", "memory's one-line `abstraction`")
	fs.Var(&f.cues, "cue", "memory cue `phrase` (repeatable)")
	fs.StringVar(&f.language, "language", "", "memory language as a BCP 47 `tag`")
	fs.Float64Var(&f.confidence, "confidence", 0, "memory confidence, 0..1")
	fs.Float64Var(&f.importance, "importance", 0, "memory importance, 0..1")
	fs.Var(&f.validFrom, "valid-from", "event `time` the memory starts to hold (RFC 3339)")
	fs.Var(&f.validTo, "valid-to", "event `time` the memory stops holding (RFC 3339)")
	fs.Var(&f.expiresAt, "expires-at", "`time` the memory expires (RFC 3339)")
	if withSources {
		fs.Var(&f.sources, "source", "`id` of an episode the memory comes from (repeatable)")
	}
}

func (f *memoryFlags) memory() engram.Memory {
	return engram.Memory{
		Kind:        engram.Kind(f.kind),
		Abstraction: f.abstraction,
		Cues:        []string(f.cues),
		Language:    f.language,
		Confidence:  f.confidence,
		Importance:  f.importance,
		ValidFrom:   f.validFrom.t,
		ValidTo:     f.validTo.t,
		ExpiresAt:   f.expiresAt.t,
		Sources:     []string(f.sources),
	}
}
