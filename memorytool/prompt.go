package memorytool

// Prompt is the memory protocol that integrators put in the system prompt
// next to the memory tool, as Anthropic's documentation gives it. It makes
// the model look at its memory before anything else and record progress as
// it goes, because its context may be reset at any time.
const Prompt = `IMPORTANT: ALWAYS VIEW YOUR MEMORY DIRECTORY BEFORE DOING ANYTHING ELSE.
MEMORY PROTOCOL:
1. Use the ` + "`view`" + ` command of your ` + "`memory`" + ` tool to check for earlier progress.
2. ... (work on the task) ...
- As you make progress, record status / progress / thoughts etc in your memory.
ASSUME INTERRUPTION: Your context window might be reset at any moment, so you risk losing any progress that is not recorded in your memory directory.`
