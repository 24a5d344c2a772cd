package clients

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Bounds on the Node steps: a first npm ci downloads the two SDKs.
const (
	npmCIWithin    = 5 * time.Minute
	nodeTestWithin = 3 * time.Minute
)

// testNode runs the Node SDK suite (../node, `node --test`) against gw and
// fails with its output when any of its tests fails. It installs the locked
// dependencies first when node_modules is absent, as on a fresh CI machine.
func testNode(t *testing.T, gw *gateway) {
	dir, err := filepath.Abs(filepath.Join("..", "node"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: the Node SDK suite needs Node 20+ and npm", tool)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); errors.Is(err, fs.ErrNotExist) {
		runIn(t, dir, npmCIWithin, hermeticEnv(), "npm", "ci", "--no-audit", "--no-fund")
	}
	env := append(hermeticEnv(),
		"FIRSTBYTE_URL="+gw.url,
		"FIRSTBYTE_KEY="+gw.key,
		"FIRSTBYTE_OPENAI_MODEL="+chatModel,
		"FIRSTBYTE_EMBEDDING_MODEL="+embeddingModel,
		"FIRSTBYTE_ANTHROPIC_MODEL="+messagesModel,
		"FIRSTBYTE_BROKEN_OPENAI_MODEL="+brokenChat,
		"FIRSTBYTE_BROKEN_ANTHROPIC_MODEL="+brokenMessages,
		"FIRSTBYTE_MIXED_MODEL="+mixedModel,
		"FIRSTBYTE_CONVERSE_MODEL="+converseModel,
		"FIRSTBYTE_GEMINI_MODEL="+geminiModel,
		"FIRSTBYTE_BROKEN_CONVERSE_MODEL="+brokenConverse,
		"FIRSTBYTE_BROKEN_GEMINI_MODEL="+brokenGemini,
		"FIRSTBYTE_CRAFTED_ANTHROPIC_MODEL="+craftedAnthropicOnly,
		"FIRSTBYTE_CRAFTED_OPENAI_MODEL="+craftedOpenAIOnly,
		"FIRSTBYTE_REQUESTED_URL="+gw.requestedURL,
		"FIRSTBYTE_REQUESTED_KEY="+gw.requestedKey,
		"NO_COLOR=1",
	)
	out := runIn(t, dir, nodeTestWithin, env, "node", "--test", "--test-reporter=spec")
	t.Logf("node --test:\n%s", out)
}

// runIn runs a command in dir with a time limit and returns its combined
// output; it fails the test with that output if the command fails. The
// command gets its own process group, so that the limit (or the end of the
// test) stops the processes it started too.
func runIn(t *testing.T, dir string, within time.Duration, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	ownProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			err = errors.Join(err, ctx.Err())
		}
		t.Fatalf("%s %v in %s: %v\n%s", name, args, dir, err, out)
	}
	return string(out)
}
