// The official TypeScript memory tool (@anthropic-ai/sdk 1.14.0,
// BetaLocalFilesystemMemoryTool) behind the same JSON-lines protocol as
// `memstore tool`: one tool input per line in, one
// {"ok":true,"output":...} or {"ok":false,"error":...} line out.
// Commands run through the SDK's own tool runner, so errors read exactly as
// the model gets them ("Error: " + message).
//
// Usage: node run.cjs BASE   (the memory root is BASE/memories)
'use strict';
const readline = require('node:readline');
const { BetaLocalFilesystemMemoryTool, betaMemoryTool } = require('@anthropic-ai/sdk/tools/memory/node');
const { runRunnableTool } = require('@anthropic-ai/sdk/lib/tools/BetaRunnableTool');

async function main() {
  const base = process.argv[2];
  if (!base) {
    process.stderr.write('usage: node run.cjs BASE\n');
    process.exit(2);
  }
  const tool = betaMemoryTool(await BetaLocalFilesystemMemoryTool.init(base));
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.trim() === '') continue;
    let answer;
    try {
      const { content, isError } = await runRunnableTool(tool, JSON.parse(line), {});
      answer = isError ? { ok: false, error: content } : { ok: true, output: content };
    } catch (e) {
      answer = { ok: false, error: 'Error: ' + (e && e.message) };
    }
    process.stdout.write(JSON.stringify(answer) + '\n');
  }
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack) + '\n');
  process.exit(1);
});
