import { DEMO_TRIES } from '@bubble/model-double';
import type { ModelMode } from './launch-options.js';

/** What the welcome thread says about the bot, in plain words; offline, the things to try on the double's demo script. */
export function welcomeNote(mode: ModelMode): string {
  const intro =
    'Welcome to Bubble! This thread is shared by you and me, **claude**: a Claude bot run by `claude-scuba`.';
  const how =
    'Write below (Enter sends, Shift+Enter starts a new line). Open **Bots** to make more bots, and **People** to invite others.';
  if (mode === 'claude')
    return `${intro}\n\nI run on **Claude**, with the credentials \`npm start\` found in its environment.\n\n${how}`;
  return [
    intro,
    "**I am not running on Claude right now.** `npm start` found neither `CLAUDE_CODE_OAUTH_TOKEN` nor `ANTHROPIC_API_KEY`, so I run on Bubble's offline **model double**: my replies are canned, to show how Bubble works without a network.",
    `Things to try, offline (write one of these below):\n\n${DEMO_TRIES.map((t) => `- **${t.prompt}**: ${t.shows}`).join('\n')}`,
    'To talk with Claude, stop Bubble (Ctrl-C), set one of those variables, and run `npm start` again.',
    how,
  ].join('\n\n');
}
