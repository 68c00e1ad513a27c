// The ten-line check: start `npx model-double --port 8787` first, then `node packages/engine/examples/hello.mjs`.
import { query } from '@anthropic-ai/claude-agent-sdk';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
const home = mkdtempSync(`${tmpdir()}/hello-`);
const env = {
  PATH: process.env.PATH,
  HOME: home,
  ANTHROPIC_BASE_URL: 'http://127.0.0.1:8787',
  ANTHROPIC_API_KEY: 'offline',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
};
for await (const m of query({
  prompt: 'Hello?',
  options: { cwd: home, env, settingSources: [], includePartialMessages: true },
})) {
  if (m.type === 'stream_event' && m.event.type === 'content_block_delta' && m.event.delta.type === 'text_delta')
    process.stdout.write(m.event.delta.text);
  if (m.type === 'result') console.log(`\n[${m.subtype}]`);
}
