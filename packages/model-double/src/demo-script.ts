import { OFFLINE_REPLY } from './model-double.js';
import type { Rule, Script } from './script.js';

/**
 * The script `npm start` runs the double with when no Claude credential is set:
 * one rule per thing the welcome note offers to try, each showing a part of
 * Bubble that works offline (a streamed answer with code, a tool call to
 * approve or deny, a long answer to stop, a sub-agent in a subthread, an
 * artifact), and a fallback that says what this is and lists the tries again.
 *
 * Every rule answers `always`: a demo is tried more than once. Sub-agent and
 * tool-result rules come first, so the text rules only ever see a person's words.
 */

/** One thing to try: what to write, and what it shows. The welcome note lists these. */
export interface DemoTry {
  /** The words to send (any text the rule's pattern matches works too). */
  readonly prompt: string;
  /** What it shows, in a few words, for the welcome note. */
  readonly shows: string;
  /** The rule that answers it. */
  readonly rule: string;
}

export const DEMO_TRIES: readonly DemoTry[] = Object.freeze([
  { prompt: 'show me some code', shows: 'a streamed answer with highlighted code', rule: 'demo-code' },
  {
    prompt: 'run a command',
    shows: 'I ask to run a shell command: **Approve** or **Deny** it',
    rule: 'demo-command',
  },
  { prompt: 'tell me a long story', shows: 'a long answer: press **Stop** while it streams', rule: 'demo-story' },
  { prompt: 'use a helper', shows: 'I hand a task to a sub-agent, in a subthread you can open', rule: 'demo-helper' },
  {
    prompt: 'write a plan',
    shows: 'I write `plan.md` as an artifact (approve it), then open **Artifacts**',
    rule: 'demo-artifact',
  },
]);

/** The shell command of the `run a command` try: it writes a file, so it always asks first. */
export const DEMO_COMMAND = "printf 'Hello from the sandbox\\n' > hello.txt && cat hello.txt && ls -l hello.txt";
/** The artifact the `write a plan` try writes. */
export const DEMO_ARTIFACT_NAME = 'plan.md';

const TRY_LIST = DEMO_TRIES.map((t) => `- **${t.prompt}**: ${t.shows}`).join('\n');

const CODE_ANSWER = [
  'Here is a small TypeScript function, streamed to you a few words at a time:',
  '',
  '```ts',
  'export function fizzBuzz(n: number): string {',
  "  if (n % 15 === 0) return 'FizzBuzz';",
  "  if (n % 3 === 0) return 'Fizz';",
  "  if (n % 5 === 0) return 'Buzz';",
  '  return String(n);',
  '}',
  '```',
  '',
  'The words are canned (I am the offline model double), but the streaming, the Markdown and the highlighting are what you get from Claude too. My reasoning is folded above the answer.',
].join('\n');

const STORY = [
  'Once upon a time, in a thread not unlike this one, a person and a bot agreed to share their work.',
  'Every word the bot wrote arrived as it was written, and every word the person wrote waited its turn in the log, numbered, never lost.',
  'One morning the bot wanted to run a command, and it asked first, because it was not the bot who owned the machine.',
  'The person read the command, thought about it, and said yes; the output came back and both of them could read it.',
  'Later the bot grew tired of doing everything alone and called a helper, who worked in a room of its own, a subthread, and reported back when it was done.',
  'They wrote a plan together, and the plan kept every version, so nobody had to wonder what had changed.',
  'Sometimes the bot talked for too long, as bots do, and the person pressed Stop, and the bot stopped mid-sentence without a fuss.',
  'This is one of those times. The story goes on and on, slowly, so that you have time to find the Stop button and press it.',
  'Days became weeks. Other people joined the thread, read back through its history, and picked up where the others had left off.',
  'The bot restarted once or twice, and each time it read the thread again from where it had stopped, and answered nothing twice.',
  'If you are still reading, the Stop button is beside this message while it streams. Press it, and the run ends as interrupted.',
  'And so the person and the bot lived and worked happily, one event at a time, until the end of the log, which never came.',
].join(' ');

const rules: Rule[] = [
  // A sub-agent (the `use a helper` try) always gets its report.
  {
    name: 'demo-helper-report',
    match: { subagent: true },
    times: 'always',
    reply: [
      {
        type: 'text',
        text: "Helper's report: I looked around the workspace and everything is in order. I am a sub-agent: this subthread is mine, and what I did stays here for anyone on the thread to read.",
        chunkWords: 3,
        delayMs: 30,
      },
    ],
  },
  {
    name: 'demo-helper-background-done',
    match: { taskNotification: true },
    times: 'always',
    reply: [{ type: 'text', text: 'My helper is done: its report is in its subthread.' }],
  },
  // What the bot says once a tool call has been answered.
  {
    name: 'demo-command-ran',
    match: { toolResult: { name: 'Bash', isError: false }, subagent: false },
    times: 'always',
    reply: [
      {
        type: 'text',
        text: "It ran: the output is under the command above. `hello.txt` is in this thread's own workspace; commands run in a sandbox that reaches nothing else on your machine. Ask me to **run a command** again and try **Deny** this time.",
        chunkWords: 3,
        delayMs: 20,
      },
    ],
  },
  {
    name: 'demo-command-refused',
    match: { toolResult: { name: 'Bash', isError: true }, subagent: false },
    times: 'always',
    reply: [
      {
        type: 'text',
        text: 'The command did not run: you denied it, or it failed (the reason is under the command above). Nothing changed. That is how a bot learns "no": it asks, and waits for the people it works for.',
        chunkWords: 3,
        delayMs: 20,
      },
    ],
  },
  {
    name: 'demo-artifact-written',
    match: { toolResult: { name: 'mcp__bubble__write_artifact', isError: false }, subagent: false },
    times: 'always',
    reply: [
      {
        type: 'text',
        text: `Written: open **Artifacts** and pick \`${DEMO_ARTIFACT_NAME}\` to read it. Ask me to **write a plan** again and it gets a second version; the panel keeps both.`,
        chunkWords: 3,
        delayMs: 20,
      },
    ],
  },
  {
    name: 'demo-artifact-refused',
    match: { toolResult: { name: 'mcp__bubble__write_artifact', isError: true }, subagent: false },
    times: 'always',
    reply: [{ type: 'text', text: `I did not write \`${DEMO_ARTIFACT_NAME}\`: the call was denied or failed.` }],
  },
  {
    name: 'demo-helper-back',
    match: { toolResult: { name: 'Agent' }, subagent: false },
    times: 'always',
    reply: [
      {
        type: 'text',
        text: 'My helper reported back. Open its subthread (the link on the call above) to see what it did; you can write there too, or come back here with the link to the parent thread.',
        chunkWords: 3,
        delayMs: 20,
      },
    ],
  },
  // The tries themselves.
  {
    name: 'demo-code',
    match: { text: { regex: '\\b(code|snippet|example)\\b', flags: 'i' }, subagent: false },
    times: 'always',
    reply: [
      {
        type: 'thinking',
        thinking: 'They asked for code. A small complete function shows streaming, Markdown and highlighting at once.',
        chunkWords: 4,
      },
      { type: 'text', text: CODE_ANSWER, chunkWords: 2, delayMs: 40 },
    ],
  },
  {
    name: 'demo-command',
    match: { text: { regex: '\\b(command|shell|bash)\\b', flags: 'i' }, subagent: false },
    times: 'always',
    reply: [
      {
        type: 'text',
        text: 'I would like to run a shell command in my workspace. It waits for you: **Approve** runs it in the sandbox, **Deny** (with a reason, if you like) tells me no.',
        chunkWords: 3,
        delayMs: 20,
      },
      {
        type: 'tool_use',
        name: 'Bash',
        input: { command: DEMO_COMMAND, description: 'Write hello.txt in the workspace and show it' },
      },
    ],
  },
  {
    name: 'demo-story',
    match: { text: { regex: '\\b(story|long)\\b', flags: 'i' }, subagent: false },
    times: 'always',
    reply: [{ type: 'text', text: STORY, chunkWords: 1, delayMs: 120 }],
  },
  {
    name: 'demo-helper',
    match: { text: { regex: '\\b(helper|sub-?agent|delegate)\\b', flags: 'i' }, subagent: false },
    times: 'always',
    reply: [
      { type: 'text', text: 'I will hand this to a helper: a sub-agent that works in a subthread of its own.' },
      {
        type: 'tool_use',
        name: 'Agent',
        input: {
          description: 'Look around the workspace',
          prompt: 'Look around the workspace and report what you find.',
          subagent_type: 'general-purpose',
        },
      },
    ],
  },
  {
    name: 'demo-artifact',
    match: { text: { regex: '\\b(plan|artifact)\\b', flags: 'i' }, subagent: false },
    times: 'always',
    reply: [
      {
        type: 'text',
        text: `I will write \`${DEMO_ARTIFACT_NAME}\` as an artifact of this thread: a file with versions that everyone here can read. Writing it is a tool call, so it asks you first.`,
        chunkWords: 3,
        delayMs: 20,
      },
      {
        type: 'tool_use',
        name: 'mcp__bubble__write_artifact',
        input: {
          name: DEMO_ARTIFACT_NAME,
          mediaType: 'text/markdown',
          content: [
            '# Plan',
            '',
            '1. Try each thing the welcome note lists.',
            '2. Invite someone from **People**, or make a bot of your own on **Bots**.',
            '3. Set `CLAUDE_CODE_OAUTH_TOKEN` or `ANTHROPIC_API_KEY` and restart `npm start` to talk to Claude.',
            '',
          ].join('\n'),
        },
      },
    ],
  },
  // Anything else: say what this is, and what to try.
  {
    name: 'demo-fallback',
    match: { subagent: false },
    times: 'always',
    reply: [{ type: 'text', text: `${OFFLINE_REPLY}\n\nThings to try here, offline:\n\n${TRY_LIST}` }],
  },
];

export const DEMO_SCRIPT: Script = Object.freeze(rules) as Script;
