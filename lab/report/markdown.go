package report

import (
	"bytes"
	"fmt"
	"strings"
)

// Markdown renders the report as Markdown; charts are linked as files
// under charts/ (written by Render).
func (r *Report) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", r.Title)
	for _, s := range r.Summary {
		fmt.Fprintf(&b, "%s\n", s)
	}
	b.WriteString("\n")
	if r.Seeds != nil {
		b.WriteString("## Seeds beside this machine\n\n")
		writeMDTable(&b, *r.Seeds, false)
	}
	if len(r.Findings) > 0 {
		b.WriteString("## Findings\n\n")
		for _, f := range r.Findings {
			fmt.Fprintf(&b, "- %s\n", f)
		}
		b.WriteString("\n")
	}
	if len(r.Proxies.Rows) > 0 {
		b.WriteString("## Proxies\n\n")
		writeMDTable(&b, r.Proxies, false)
	}
	if r.Profiles != nil {
		b.WriteString("## Profiles\n\n")
		writeMDTable(&b, *r.Profiles, true)
		for _, c := range r.Configs {
			fmt.Fprintf(&b, "- %s: [%s](%s)\n", c.Profile, c.Name, c.Path)
		}
		if len(r.Configs) > 0 {
			b.WriteString("\n")
		}
	}
	if r.Checks != nil {
		b.WriteString("## Checks\n\n")
		writeMDTable(&b, *r.Checks, false)
	}
	if r.Seed001 != nil {
		b.WriteString("## Seed 001 beside this machine\n\n")
		writeMDTable(&b, *r.Seed001, true)
	}
	if r.Files != nil {
		b.WriteString("## Serving files\n\n")
		writeMDTable(&b, *r.Files, false)
	}
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", s.Scenario, s.Intro)
		for _, t := range s.Tables {
			writeMDTable(&b, t, true)
		}
		if s.Ranking != "" {
			fmt.Fprintf(&b, "%s.\n\n", s.Ranking)
		}
		for _, c := range s.Charts {
			fmt.Fprintf(&b, "![%s](%s)\n\n", c.Title, c.File)
		}
	}
	if r.Protocols != nil {
		b.WriteString("## Protocols\n\n")
		writeMDTable(&b, *r.Protocols, true)
	}
	if r.Scaling != nil {
		b.WriteString("## Scaling\n\n")
		writeMDTable(&b, *r.Scaling, true)
	}
	writeMDList(&b, "Legend", r.Legend)
	writeMDList(&b, "Not run", r.NotRun)
	writeMDList(&b, "Notes", r.Notes)
	writeMDList(&b, "CPU layouts", r.Layouts)
	return b.Bytes()
}

// MarkdownTables renders only the tables and findings (what `lab run`
// prints at the end).
func (r *Report) MarkdownTables() []byte {
	var b bytes.Buffer
	if r.Seeds != nil {
		b.WriteString("## Seeds beside this machine\n\n")
		writeMDTable(&b, *r.Seeds, false)
	}
	if r.Checks != nil {
		b.WriteString("## Checks\n\n")
		writeMDTable(&b, *r.Checks, false)
	}
	if r.Seed001 != nil {
		b.WriteString("## Seed 001 beside this machine\n\n")
		writeMDTable(&b, *r.Seed001, true)
	}
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "## %s\n\n", s.Scenario)
		for _, t := range s.Tables {
			writeMDTable(&b, t, true)
		}
		if s.Ranking != "" {
			fmt.Fprintf(&b, "%s.\n\n", s.Ranking)
		}
	}
	if r.Protocols != nil {
		b.WriteString("## Protocols\n\n")
		writeMDTable(&b, *r.Protocols, true)
	}
	if r.Scaling != nil {
		b.WriteString("## Scaling\n\n")
		writeMDTable(&b, *r.Scaling, true)
	}
	if r.Files != nil {
		b.WriteString("## Serving files\n\n")
		writeMDTable(&b, *r.Files, false)
	}
	writeMDList(&b, "Findings", r.Findings)
	writeMDList(&b, "Legend", r.Legend)
	writeMDList(&b, "Not run", r.NotRun)
	return b.Bytes()
}

func writeMDTable(b *bytes.Buffer, t Table, caption bool) {
	if caption && t.Caption != "" {
		fmt.Fprintf(b, "**%s**\n\n", t.Caption)
	}
	cells := func(row []string) {
		b.WriteString("|")
		for _, c := range row {
			fmt.Fprintf(b, " %s |", mdEscape(c))
		}
		b.WriteString("\n")
	}
	cells(t.Header)
	b.WriteString("|" + strings.Repeat("---|", len(t.Header)) + "\n")
	for i, row := range t.Rows {
		if i < len(t.Marks) && t.Marks[i] != "" && len(row) > 0 {
			row = append([]string{row[0] + " " + t.Marks[i]}, row[1:]...)
		}
		cells(row)
	}
	b.WriteString("\n")
	for _, f := range t.Footnotes {
		fmt.Fprintf(b, "%s  \n", mdEscape(f))
	}
	if len(t.Footnotes) > 0 {
		b.WriteString("\n")
	}
}

func writeMDList(b *bytes.Buffer, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "## %s\n\n", title)
	for _, it := range items {
		fmt.Fprintf(b, "- %s\n", it)
	}
	b.WriteString("\n")
}
