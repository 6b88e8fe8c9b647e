package dashboard_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/api/wire"
)

// renderTitles runs ui.js's opTitle in node (a DOM of text only: h builds
// elements, never markup) on the operations, as the API answers them, and
// returns each title's text and the offline marks' data-offline values.
const renderTitles = `
class Node {
  constructor(tag) { this.tag = tag; this.attrs = {}; this.children = []; }
  set className(v) { this.attrs.class = v; }
  setAttribute(k, v) { this.attrs[k] = v; }
  addEventListener() {}
  append(c) { this.children.push(c); }
  get textContent() { return this.children.map((c) => typeof c === "string" ? c : c.textContent).join(""); }
  marks() { return this.children.flatMap((c) => typeof c === "string" ? [] :
    [...("data-offline" in c.attrs ? [c.attrs["data-offline"]] : []), ...c.marks()]); }
}
globalThis.Node = Node;
globalThis.document = { createElement: (tag) => new Node(tag) };
const { h, opTitle } = await import(process.argv[1]);
const ops = JSON.parse(process.argv[2]);
console.log(JSON.stringify(ops.map((op) => { const el = h("h1", {}, opTitle(op)); return [el.textContent, el.marks()]; })));
`

// The install's operations list and the operation's page head an imported
// offline deploy with "offline" and its bundle index; a connected deploy
// has no such mark.
func TestOfflineDeployIsMarked(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH: the dashboard's scripts are run in node here")
	}
	index := "sha256:" + strings.Repeat("9f", 32)
	ops, err := json.Marshal([]wire.Operation{
		{Kind: "offline_deploy", Status: "succeeded", Source: "offline", BundleIndex: index},
		{Kind: "deploy_config", Status: "succeeded"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ui, err := filepath.Abs("assets/js/ui.js")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, "--input-type=module", "-e", renderTitles, "file://"+ui, string(ops)).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got [][2]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node's answer: %v\n%s", err, out)
	}
	if len(got) != 2 || got[0][0] != "offline deploy succeeded offline · bundle 9f9f9f9f9f9f" ||
		len(got[0][1].([]any)) != 1 || got[0][1].([]any)[0] != index {
		t.Errorf("the offline deploy's title: %q", got)
	}
	if len(got) == 2 && (got[1][0] != "deploy config succeeded" || len(got[1][1].([]any)) != 0) {
		t.Errorf("the connected deploy's title: %q", got[1])
	}
	// Both pages head an operation with opTitle.
	for _, page := range []string{"install.js", "operation.js"} {
		src, err := os.ReadFile("assets/js/" + page)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "opTitle(op)") {
			t.Errorf("%s does not head its operations with opTitle(op)", page)
		}
	}
}
