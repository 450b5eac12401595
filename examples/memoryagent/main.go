// Command memoryagent is a minimal agent with the memory tool: Claude
// answers a prompt, reading and writing files under /memories, which live in
// a local directory and so persist from one run to the next.
//
// Run it with an API key (ANTHROPIC_BASE_URL, if set, picks another
// endpoint):
//
//	export ANTHROPIC_API_KEY=...
//	go run ./examples/memoryagent "Remember that I prefer tea."
//	go run ./examples/memoryagent "What do I like to drink?"
//
// Flags: --root DIR is the memory directory (default ./memory),
// --model the Claude model. The memory tool's commands are logged to stderr
// and the final answer is printed to stdout.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/memstore/memstore/memorytool"
	"github.com/memstore/memstore/memorytool/anthropicsdk"
)

func main() {
	root := flag.String("root", "./memory", "memory directory, seen by the model as /memories")
	model := flag.String("model", string(anthropic.ModelClaudeSonnet4_6), "Claude model")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: memoryagent [--root DIR] [--model NAME] PROMPT...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	prompt := strings.Join(flag.Args(), " ")
	if prompt == "" {
		flag.Usage()
		os.Exit(2)
	}
	if os.Getenv("ANTHROPIC_API_KEY") == "" {
		fmt.Fprintln(os.Stderr, "memoryagent: set ANTHROPIC_API_KEY")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	answer, err := run(ctx, *root, *model, prompt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "memoryagent:", err)
		os.Exit(1)
	}
	fmt.Println(answer)
}

// run answers prompt with the memory tool over the directory root and
// returns the text of the model's last message.
func run(ctx context.Context, root, model, prompt string) (string, error) {
	memory, err := memorytool.OpenLocal(root, memorytool.Options{})
	if err != nil {
		return "", err
	}
	defer memory.Close()

	// The client reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL.
	client := anthropic.NewClient()
	runner := client.Beta.Messages.NewToolRunner(
		[]anthropic.BetaTool{anthropicsdk.NewTool(memory)},
		anthropic.BetaToolRunnerParams{
			BetaMessageNewParams: anthropic.BetaMessageNewParams{
				Model:     anthropic.Model(model),
				MaxTokens: 4096,
				System:    []anthropic.BetaTextBlockParam{{Text: memorytool.Prompt}},
				Messages: []anthropic.BetaMessageParam{
					anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(prompt)),
				},
				// The runner runs one turn's tool calls concurrently; memory
				// commands often depend on each other (create, then edit), so
				// ask the model for one call per turn.
				ToolChoice: anthropic.BetaToolChoiceUnionParam{
					OfAuto: &anthropic.BetaToolChoiceAutoParam{DisableParallelToolUse: anthropic.Bool(true)},
				},
				// The memory tool is part of the context-management beta.
				Betas: []anthropic.AnthropicBeta{anthropic.AnthropicBetaContextManagement2025_06_27},
			},
			// A bound on API calls, so that a model stuck in a loop of tool
			// calls cannot run up costs.
			MaxIterations: 50,
		},
	)
	anthropicsdk.SetDefinition(&runner.Params)

	var last *anthropic.BetaMessage
	for message, err := range runner.All(ctx) {
		if err != nil {
			return "", err
		}
		last = message
		for _, block := range message.Content {
			if block.Type == "tool_use" && block.Name == memorytool.ToolName {
				fmt.Fprintf(os.Stderr, "[memory] %s\n", block.Input)
			}
		}
	}
	if last == nil {
		return "", fmt.Errorf("no reply from the model")
	}
	var text strings.Builder
	for _, block := range last.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	return text.String(), nil
}
