// Package formation turns episodes into memories without a language model.
//
// Retrieval can only find what formation made findable, so the rule-based
// Former here writes, for every episode, a memory whose value is the
// episode's text verbatim (so a context built from it quotes the source
// exactly) and whose index fields carry what the text leaves implicit:
//
//   - speaker attribution: first-person text is indexed under its speaker's
//     name ("Caroline: I went ..."), so "what did Caroline research?" meets
//     "I researched adoption agencies";
//   - absolute dates: relative expressions ("yesterday", "last Saturday",
//     "two weeks ago", "next month") are resolved against the episode's
//     event time (see Resolve) and written next to the expression in the
//     abstraction, kept as cues, and stored as the memory's event period in
//     metadata ("event_from", "event_to");
//   - cue anchors: names, quoted titles and dates, the handles an entity
//     lookup matches a question against;
//   - a short primary abstraction: the speaker and the first sentences;
//   - the conversation: the other party's turns before and after as
//     context, links to the neighbouring turns' memories, and the
//     conversation's id. A batch that continues a conversation stored
//     before (FormRequest.Prev, which the engine fills with the turn
//     stored just before) is formed as if the two had come in one batch.
//
// Each episode is read in the language package lang detects for it (the
// memory's Language): its dates by that language's expressions (German,
// Spanish, French, Chinese and Japanese have their own, the rest English's)
// and its names by that language's rules (in German, where every noun is
// capitalised, a capital alone makes no name; Chinese, Japanese and Korean
// give names only through the speaker and quoted titles). Text in scripts
// written without spaces passes through unchanged: the stores segment it
// for their text index.
package formation
