package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/engramhq/engram"
)

var identitiesCommand = &Command{
	Name:     "identities",
	Synopsis: "cluster face and voice observations into identities and link them to persons",
	Usage: `
Usage: engram identities observe [flags] FILE
       engram identities list [flags] [--modality M] [--person ID]
       engram identities get [flags] ID
       engram identities link [flags] [--name NAME] [--person ID] [--episode ID] [IDENTITY...]
       engram identities unlink [flags] ID
       engram identities merge [flags] INTO FROM...
       engram identities split [flags] ID OBSERVATION...
       engram identities history [flags] ID
       engram identities persons [flags]
       engram identities delete [flags] ID

observe reads FILE ("-" for standard input) as JSON lines, each an
observation {"modality":"face","embedding":[...],"episode_id":"..."} made
by your own face or voice model, and clusters them (256 a batch) into the
user's identities: each joins the nearest identity of its modality or
starts one. The first observation of a modality declares its width. list
prints the user's identities (id, modality, observations, person); get one
with its observations and the episodes they were seen in. link records
that identities and a name are one person (with --episode, stated by that
episode; else asserted by you); search then finds a person's episodes by
the name or any alias. merge, split, unlink and delete change identities;
history prints what happened to an identity or a person. All work on the
data directory, --store or, with --server, a running server.`,
	Run: runIdentities,
}

func runIdentities(ctx context.Context, m *Main, cmd *Command, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		if len(args) > 0 {
			fmt.Fprintln(m.Stdout, cmd.Usage[1:])
			return nil
		}
		return cmdUsageErrorf(cmd, "identities needs a subcommand: observe, list, get, link, unlink, merge, split, history, persons or delete")
	}
	run := map[string]func(context.Context, *Main, *Command, []string) error{
		"observe": runIdentitiesObserve, "list": runIdentitiesList, "get": runIdentitiesGet, "link": runIdentitiesLink,
		"unlink": runIdentitiesUnlink, "merge": runIdentitiesMerge, "split": runIdentitiesSplit,
		"history": runIdentitiesHistory, "persons": runIdentitiesPersons, "delete": runIdentitiesDelete,
	}[args[0]]
	if run == nil {
		return cmdUsageErrorf(cmd, "unknown identities subcommand %q; it is one of observe, list, get, link, unlink, merge, split, history, persons, delete", args[0])
	}
	return run(ctx, m, cmd, args[1:])
}

// identityCmd parses a subcommand's flags (with --json) and, when its
// positional arguments number at least min (and at most max, unless max
// is negative), runs fn with the service's identity capability.
func identityCmd(ctx context.Context, m *Main, cmd *Command, args []string, mode openMode, min, max int, extra func(fs *flag.FlagSet), fn func(ctx context.Context, is engram.IdentityService, sf *storeFlags, pos []string, asJSON bool) error) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the answer as JSON")
	if extra != nil {
		extra(fs)
	}
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) < min || (max >= 0 && len(pos) > max) {
		return cmdUsageErrorf(cmd, "identities: wrong number of arguments %q; see engram identities --help", pos)
	}
	return sf.withService(ctx, cmd, m, mode, func(ctx context.Context, svc engram.Service) error {
		return fn(ctx, svc, &sf, pos, *asJSON)
	})
}

func identityLine(i *engram.Identity) string {
	person := i.PersonID
	if person == "" {
		person = "-"
	}
	return fmt.Sprintf("%s  %-8s %5d observations  person %s  %s", i.ID, i.Modality, i.Count, person, i.Label)
}

func runIdentitiesObserve(ctx context.Context, m *Main, cmd *Command, args []string) error {
	return identityCmd(ctx, m, cmd, args, openWrite, 1, 1, nil, func(ctx context.Context, is engram.IdentityService, sf *storeFlags, pos []string, asJSON bool) error {
		in, _, err := m.openInput(pos[0])
		if err != nil {
			return cmdUsageErrorf(cmd, "identities observe: cannot open FILE: %v", err)
		}
		defer in.Close()
		var batch []engram.ObservationInput
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			res, err := is.AddObservations(ctx, engram.AddObservationsRequest{Namespace: sf.namespace(), Observations: batch})
			if err != nil {
				return err
			}
			batch = batch[:0]
			for _, o := range res.Observations {
				if asJSON {
					o.Embedding = nil
					if err := writeJSON(m.Stdout, o); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(m.Stdout, "%s  %s  identity %s\n", o.ID, o.Modality, o.IdentityID)
				}
			}
			return nil
		}
		err = readJSONL(in, pos[0], func(o *engram.ObservationInput, _ int) error {
			batch = append(batch, *o)
			if len(batch) == engram.MaxObservations {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
		return flush()
	})
}

func runIdentitiesList(ctx context.Context, m *Main, cmd *Command, args []string) error {
	var modality, person *string
	return identityCmd(ctx, m, cmd, args, openRead, 0, 0, func(fs *flag.FlagSet) {
		modality = fs.String("modality", "", "only identities of this `modality`")
		person = fs.String("person", "", "only identities linked to this person `id`")
	}, func(ctx context.Context, is engram.IdentityService, sf *storeFlags, _ []string, asJSON bool) error {
		ids, err := is.ListIdentities(ctx, sf.scope(), engram.IdentityFilter{Modality: *modality, PersonID: *person})
		if err != nil || asJSON {
			return orJSON(m, err, ids)
		}
		for i := range ids {
			fmt.Fprintln(m.Stdout, identityLine(&ids[i]))
		}
		return nil
	})
}

// orJSON returns err, or writes v as JSON.
func orJSON(m *Main, err error, v any) error {
	if err != nil {
		return err
	}
	return writeJSON(m.Stdout, v)
}

func runIdentitiesGet(ctx context.Context, m *Main, cmd *Command, args []string) error {
	return identityCmd(ctx, m, cmd, args, openRead, 1, 1, nil, func(ctx context.Context, is engram.IdentityService, sf *storeFlags, pos []string, asJSON bool) error {
		d, err := is.GetIdentity(ctx, sf.scope(), pos[0])
		if err != nil || asJSON {
			return orJSON(m, err, d)
		}
		fmt.Fprintln(m.Stdout, identityLine(&d.Identity))
		for _, o := range d.Observations {
			fmt.Fprintf(m.Stdout, "  observation %s  %s  episode %s\n", o.ID, o.At.Format("2006-01-02 15:04:05Z07:00"), o.EpisodeID)
		}
		for _, e := range d.Episodes {
			fmt.Fprintf(m.Stdout, "  episode %s  %s\n", e.ID, strings.ReplaceAll(e.Content, "\n", " "))
		}
		return nil
	})
}

func runIdentitiesLink(ctx context.Context, m *Main, cmd *Command, args []string) error {
	var name, person, episode *string
	return identityCmd(ctx, m, cmd, args, openWrite, 0, -1, func(fs *flag.FlagSet) {
		name = fs.String("name", "", "the person's `name` (or another alias)")
		person = fs.String("person", "", "add to the person with this `id`")
		episode = fs.String("episode", "", "the `id` of the episode that states the link (else you assert it)")
	}, func(ctx context.Context, is engram.IdentityService, sf *storeFlags, pos []string, asJSON bool) error {
		req := engram.LinkRequest{Identities: pos, Name: *name, PersonID: *person, EpisodeID: *episode}
		if *episode != "" {
			req.Source = engram.PersonStated
		}
		p, err := is.LinkIdentities(ctx, sf.scope(), req)
		if err != nil || asJSON {
			return orJSON(m, err, p)
		}
		fmt.Fprintf(m.Stdout, "person %s  %s  aliases %s  identities %s\n", p.ID, p.Name, strings.Join(p.Aliases, ", "), strings.Join(p.Identities, " "))
		return nil
	})
}

func runIdentitiesUnlink(ctx context.Context, m *Main, cmd *Command, args []string) error {
	return identityCmd(ctx, m, cmd, args, openWrite, 1, 1, nil, func(ctx context.Context, is engram.IdentityService, sf *storeFlags, pos []string, asJSON bool) error {
		i, err := is.UnlinkIdentity(ctx, sf.scope(), pos[0])
		if err != nil || asJSON {
			return orJSON(m, err, i)
		}
		fmt.Fprintln(m.Stdout, identityLine(i))
		return nil
	})
}

func runIdentitiesMerge(ctx context.Context, m *Main, cmd *Command, args []string) error {
	return identityCmd(ctx, m, cmd, args, openWrite, 2, -1, nil, func(ctx context.Context, is engram.IdentityService, sf *storeFlags, pos []string, asJSON bool) error {
		i, err := is.MergeIdentities(ctx, sf.scope(), engram.IdentityMergeRequest{Into: pos[0], From: pos[1:]})
		if err != nil || asJSON {
			return orJSON(m, err, i)
		}
		fmt.Fprintln(m.Stdout, identityLine(i))
		return nil
	})
}

func runIdentitiesSplit(ctx context.Context, m *Main, cmd *Command, args []string) error {
	return identityCmd(ctx, m, cmd, args, openWrite, 2, -1, nil, func(ctx context.Context, is engram.IdentityService, sf *storeFlags, pos []string, asJSON bool) error {
		i, err := is.SplitIdentity(ctx, sf.scope(), pos[0], engram.IdentitySplitRequest{Observations: pos[1:]})
		if err != nil || asJSON {
			return orJSON(m, err, i)
		}
		fmt.Fprintln(m.Stdout, identityLine(i))
		return nil
	})
}

func runIdentitiesHistory(ctx context.Context, m *Main, cmd *Command, args []string) error {
	return identityCmd(ctx, m, cmd, args, openRead, 1, 1, nil, func(ctx context.Context, is engram.IdentityService, sf *storeFlags, pos []string, asJSON bool) error {
		evs, err := is.IdentityHistory(ctx, sf.scope(), pos[0])
		if err != nil || asJSON {
			return orJSON(m, err, evs)
		}
		for _, ev := range evs {
			fmt.Fprintf(m.Stdout, "%s  %-6s %-7s identities %s  person %s  by %s\n", ev.At.Format("2006-01-02 15:04:05Z07:00"), ev.Op, ev.Source,
				strings.Join(ev.Identities, " "), ev.PersonID, ev.Actor)
		}
		return nil
	})
}

func runIdentitiesPersons(ctx context.Context, m *Main, cmd *Command, args []string) error {
	return identityCmd(ctx, m, cmd, args, openRead, 0, 0, nil, func(ctx context.Context, is engram.IdentityService, sf *storeFlags, _ []string, asJSON bool) error {
		ps, err := is.ListPersons(ctx, sf.scope())
		if err != nil || asJSON {
			return orJSON(m, err, ps)
		}
		for _, p := range ps {
			fmt.Fprintf(m.Stdout, "person %s  %s  aliases %s  identities %s\n", p.ID, p.Name, strings.Join(p.Aliases, ", "), strings.Join(p.Identities, " "))
		}
		return nil
	})
}

func runIdentitiesDelete(ctx context.Context, m *Main, cmd *Command, args []string) error {
	return identityCmd(ctx, m, cmd, args, openWrite, 1, 1, nil, func(ctx context.Context, is engram.IdentityService, sf *storeFlags, pos []string, _ bool) error {
		if err := is.DeleteIdentity(ctx, sf.scope(), pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "deleted identity %s\n", pos[0])
		return nil
	})
}
