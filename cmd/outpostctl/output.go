package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// printJSON writes v as indented JSON.
func (c *cli) printJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.stdout, "%s\n", b)
	return err
}

// printAnswer prints an API call's answer r, unless err (the call's) is set:
// with -o json its body, else what text writes.
func (c *cli) printAnswer(r answer, err error, text func() error) error {
	if err != nil {
		return err
	}
	if c.output == "json" {
		return c.printBody(r.GetBody())
	}
	return text()
}

// printBody writes an API answer's JSON body, indented.
func (c *cli) printBody(body []byte) error {
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := c.stdout.Write(b.Bytes())
	return err
}

// table writes a header and rows, aligned in columns.
func table(out io.Writer, header string, rows [][]string) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, header)
	for _, r := range rows {
		for i, cell := range r {
			if i > 0 {
				fmt.Fprint(w, "\t")
			}
			fmt.Fprint(w, cell)
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}
