package helm

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
	"helm.sh/helm/v3/pkg/postrender"
)

// postRenderer points the rendered manifests' images at the install's
// registry (helm's post-renderer: hooks are not post-rendered). copy says
// whether the images are copied (a deploy) or only resolved (a dry run).
type postRenderer struct {
	// ctx is the job's: helm's PostRenderer interface takes none.
	ctx  context.Context
	r    *relocator
	copy bool
}

// postRenderer is the job's post-renderer; nil when it relocates nothing.
func (r *releaseJob) postRenderer(ctx context.Context, copy bool) postrender.PostRenderer {
	if r.images == nil {
		return nil
	}
	return postRenderer{ctx: ctx, r: r.images, copy: copy}
}

// docSeparator starts a YAML document.
var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

func (p postRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	var out bytes.Buffer
	for _, doc := range docSeparator.Split(in.String(), -1) {
		doc = strings.TrimLeft(doc, "\n")
		if strings.TrimSpace(doc) == "" {
			continue
		}
		doc, err := p.rewrite(doc)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n" + doc)
		if !strings.HasSuffix(doc, "\n") {
			out.WriteString("\n")
		}
	}
	if p.copy && p.r.listed != nil {
		if err := p.r.copyListed(p.ctx); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// rewrite points the images of one document's containers,
// initContainers and ephemeralContainers (at any depth: a Pod, a
// Deployment's template, a CronJob's job template, a custom resource's pod
// template) at the install's registry. A document it changes nothing in is
// kept byte for byte.
func (p postRenderer) rewrite(doc string) (string, error) {
	if !strings.Contains(doc, "image") {
		return doc, nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		return doc, nil // helm reports what does not parse, after us
	}
	changed := false
	var err error
	eachImage(&root, func(n *yaml.Node) {
		if err != nil {
			return
		}
		var to string
		if to, err = p.r.target(p.ctx, n.Value, p.copy); err == nil && to != "" {
			n.Value, n.Style, n.Tag = to, 0, "!!str"
			changed = true
		}
	})
	if err != nil || !changed {
		return doc, err
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return "", fmt.Errorf("rewriting the images of a manifest: %w", err)
	}
	return b.String(), enc.Close()
}

// containerLists are the keys of a pod spec whose lists of containers name
// images.
var containerLists = map[string]bool{"containers": true, "initContainers": true, "ephemeralContainers": true}

// eachImage calls fn with each string image of a container in n.
func eachImage(n *yaml.Node, fn func(*yaml.Node)) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			eachImage(c, fn)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if containerLists[k.Value] && v.Kind == yaml.SequenceNode {
				for _, c := range v.Content {
					if img := mappingValue(c, "image"); img != nil && img.Kind == yaml.ScalarNode && img.Value != "" {
						fn(img)
					}
				}
			}
			eachImage(v, fn)
		}
	}
}

// mappingValue is key's value in mapping n (nil: none).
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
