// Writes each bot's CONFIG.md from its config schema (run after `npm run build`).
import { writeFileSync } from 'node:fs';

const pages = [
  [
    'packages/claude-scuba/CONFIG.md',
    '../packages/claude-scuba/dist/config/config-reference.js',
    'scubaConfigReference',
  ],
  [
    'packages/discord-bot/CONFIG.md',
    '../packages/discord-bot/dist/config/config-reference.js',
    'discordConfigReference',
  ],
];
for (const [path, module, name] of pages) {
  const render = (await import(new URL(module, import.meta.url)))[name];
  writeFileSync(new URL(`../${path}`, import.meta.url), render());
  console.log(`wrote ${path}`);
}
