package main

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/engramhq/engram"
)

var resourcesCommand = &Command{
	Name:     "resources",
	Synopsis: "upload, list, download and delete files (documents become memories)",
	Usage: `
Usage: engram resources add [flags] FILE
       engram resources list [flags]
       engram resources get [flags] ID
       engram resources download [flags] [-o FILE] ID
       engram resources delete [flags] ID

A resource is a file stored in the scope's namespace, identified by the
SHA-256 of its content. add uploads FILE a chunk at a time (its MIME type
from --type, else from its extension, else from its first bytes); a
document (text, Markdown, HTML, PDF) is also split by headings and
paragraphs into memories of kind resource that search finds and that cite
the resource and the span they come from. list prints the scope's
resources, newest first (id, size, memories, MIME type, name). get prints
one resource. download writes its content to -o FILE or to standard
output. delete removes it, its content and its memories. All work on the
data directory, --store or, with --server, a running server.`,
	Run: runResources,
}

func runResources(ctx context.Context, m *Main, cmd *Command, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		if len(args) > 0 {
			fmt.Fprintln(m.Stdout, cmd.Usage[1:])
			return nil
		}
		return cmdUsageErrorf(cmd, "resources needs a subcommand: add, list, get, download or delete")
	}
	run := map[string]func(context.Context, *Main, *Command, []string) error{
		"add": runResourcesAdd, "list": runResourcesList, "get": runResourcesGet,
		"download": runResourcesDownload, "delete": runResourcesDelete,
	}[args[0]]
	if run == nil {
		return cmdUsageErrorf(cmd, "unknown resources subcommand %q; it is one of add, list, get, download, delete", args[0])
	}
	return run(ctx, m, cmd, args[1:])
}

// resourceLine is the one-line form of a resource.
func resourceLine(r *engram.Resource) string {
	return fmt.Sprintf("%s  %10d bytes  %4d memories  %-24s %s", r.ID, r.Size, r.Memories, r.MIMEType, r.Name)
}

func printResource(m *Main, r *engram.Resource) {
	fmt.Fprintf(m.Stdout, "id          %s\n", r.ID)
	fmt.Fprintf(m.Stdout, "name        %s\n", r.Name)
	fmt.Fprintf(m.Stdout, "mime type   %s\n", r.MIMEType)
	fmt.Fprintf(m.Stdout, "size        %d bytes\n", r.Size)
	fmt.Fprintf(m.Stdout, "sha256      %s\n", r.SHA256)
	fmt.Fprintf(m.Stdout, "memories    %d\n", r.Memories)
	if r.Source != "" {
		fmt.Fprintf(m.Stdout, "source      %s\n", r.Source)
	}
	fmt.Fprintf(m.Stdout, "created     %s\n", r.CreatedAt.Format("2006-01-02 15:04:05Z07:00"))
}

func runResourcesAdd(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the resource as JSON")
	name := fs.String("name", "", "the resource's `name`; default the file's base name")
	source := fs.String("source", "", "where the file came from (a URL, a path)")
	mimeType := fs.String("type", "", "the file's MIME `type`; default from its extension or content")
	path, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return cmdUsageErrorf(cmd, "resources add: cannot open FILE: %v", err)
	}
	defer f.Close()
	if *name == "" {
		*name = filepath.Base(path)
	}
	if *mimeType == "" {
		if *mimeType, err = sniffType(f, *name); err != nil {
			return err
		}
	}
	return sf.withService(ctx, cmd, m, openWrite, func(ctx context.Context, svc engram.Service) error {
		r, err := svc.AddResource(ctx, engram.Resource{Namespace: sf.namespace(), Name: *name, MIMEType: *mimeType, Source: *source}, f)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(m.Stdout, r)
		}
		fmt.Fprintln(m.Stdout, resourceLine(r))
		return nil
	})
}

// sniffType returns the MIME type of a file by its name's extension, else
// by its first bytes, and rewinds it.
func sniffType(f *os.File, name string) (string, error) {
	if t := mime.TypeByExtension(strings.ToLower(filepath.Ext(name))); t != "" {
		return t, nil
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind %s: %w", name, err)
	}
	return http.DetectContentType(head[:n]), nil
}

func runResourcesList(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the page as JSON")
	limit := fs.Int("limit", 0, "most `resources` to list; default 50")
	cursor := fs.String("cursor", "", "`cursor` of the next page, from a previous list")
	if pos, err := m.parse(cmd, fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "resources list takes no arguments, got %q", pos[0])
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		page, err := svc.ListResources(ctx, sf.scope(), engram.ResourceFilter{Limit: *limit, Cursor: *cursor})
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(m.Stdout, page)
		}
		for i := range page.Resources {
			fmt.Fprintln(m.Stdout, resourceLine(&page.Resources[i]))
		}
		if page.Next != "" {
			fmt.Fprintf(m.Stdout, "next page: --cursor %s\n", page.Next)
		}
		return nil
	})
}

func runResourcesGet(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the resource as JSON")
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		r, err := svc.GetResource(ctx, sf.scope(), id)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(m.Stdout, r)
		}
		printResource(m, r)
		return nil
	})
}

func runResourcesDownload(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	out := fs.String("o", "", "write the content to this `file` instead of standard output")
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		_, body, err := svc.OpenResource(ctx, sf.scope(), id)
		if err != nil {
			return err
		}
		defer body.Close()
		if *out == "" {
			_, err = io.Copy(m.Stdout, body)
			return err
		}
		return writeFileFrom(*out, body)
	})
}

// writeFileFrom writes r to a new file at path (replacing one there) and
// removes it when the copy fails.
func writeFileFrom(path string, r io.Reader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func runResourcesDelete(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	id, err := m.parseID(cmd, fs, args)
	if err != nil {
		return err
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		if err := svc.DeleteResource(ctx, sf.scope(), id); err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "deleted resource %s with its content and memories\n", id)
		return nil
	})
}
