package engine

import (
	"github.com/outpost-dev/outpost/runner/dockerbuild"

	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	controlapi "github.com/moby/buildkit/api/services/control"
)

// message is one JSON message of the engine's build stream.
type message struct {
	Stream string          `json:"stream"`
	ID     string          `json:"id"`
	Aux    json.RawMessage `json:"aux"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
	ErrorText string `json:"error"`
}

// vertex is one step of the build as the log has shown it.
type vertex struct {
	n                     int
	started, done, cached bool
}

// progress turns BuildKit's status (the stream's moby.buildkit.trace
// messages) into plain lines, as `docker build --progress=plain` does:
// "#3 [build 2/3] RUN …", its output, "#3 CACHED" or "#3 DONE".
type progress struct {
	log      io.Writer
	vertices map[string]*vertex
	order    int
	imageID  string
}

func newProgress(log io.Writer) *progress {
	return &progress{log: log, vertices: map[string]*vertex{}}
}

// read reads the stream to its end; an error message in it is the build's
// failure, with the builder's message.
func (p *progress) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("reading the build's output: %w", err)
		}
		switch {
		case m.Error != nil:
			return &dockerbuild.Failed{Message: m.Error.Message}
		case m.ErrorText != "":
			return &dockerbuild.Failed{Message: m.ErrorText}
		case m.ID == "moby.buildkit.trace":
			if err := p.trace(m.Aux); err != nil {
				return err
			}
		case m.ID == "moby.image.id":
			var id struct{ ID string }
			if json.Unmarshal(m.Aux, &id) == nil {
				p.imageID = id.ID
			}
		case m.Stream != "":
			io.WriteString(p.log, m.Stream)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the build's output: %w", err)
	}
	if p.imageID == "" {
		return &dockerbuild.Failed{Message: "the engine's build output ended without an image"}
	}
	return nil
}

// trace writes what one status update says.
func (p *progress) trace(aux json.RawMessage) error {
	var raw []byte // base64 in the JSON
	if err := json.Unmarshal(aux, &raw); err != nil {
		return fmt.Errorf("reading the build's status: %w", err)
	}
	var st controlapi.StatusResponse
	if err := st.UnmarshalVT(raw); err != nil {
		return fmt.Errorf("reading the build's status: %w", err)
	}
	for _, v := range st.Vertexes {
		x := p.vertex(v.Digest)
		if v.Started != nil && !x.started {
			x.started = true
			fmt.Fprintf(p.log, "#%d %s\n", x.n, v.Name)
		}
		switch {
		case v.Error != "":
			fmt.Fprintf(p.log, "#%d ERROR: %s\n", x.n, v.Error)
		case v.Cached && !x.cached:
			x.cached, x.done = true, true
			if !x.started {
				x.started = true
				fmt.Fprintf(p.log, "#%d %s\n", x.n, v.Name)
			}
			fmt.Fprintf(p.log, "#%d CACHED\n", x.n)
		case v.Completed != nil && !x.done:
			x.done = true
			fmt.Fprintf(p.log, "#%d DONE\n", x.n)
		}
	}
	for _, l := range st.Logs {
		x := p.vertex(l.Vertex)
		for _, line := range strings.Split(strings.TrimRight(string(l.Msg), "\n"), "\n") {
			fmt.Fprintf(p.log, "#%d %s\n", x.n, line)
		}
	}
	return nil
}

func (p *progress) vertex(digest string) *vertex {
	x, ok := p.vertices[digest]
	if !ok {
		p.order++
		x = &vertex{n: p.order}
		p.vertices[digest] = x
	}
	return x
}

// steps counts the steps and those the cache served.
func (p *progress) steps() (steps, cached int) {
	for _, x := range p.vertices {
		steps++
		if x.cached {
			cached++
		}
	}
	return steps, cached
}
