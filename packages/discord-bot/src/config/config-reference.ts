import { renderConfigReference } from '@bubble/engine';
import { ConfigFileSchema } from './config.js';

/** bubble-discord's CONFIG.md, rendered from the schema (`npm run docs:config` writes it). */
export function discordConfigReference(): string {
  return renderConfigReference({
    title: 'bubble-discord config reference',
    intro: `
\`npx bubble-discord --config discord.json\` reads one JSON file. \`discord.token\`, \`discord.applicationId\`
and \`secretsKey\` are required; every other key has the default shown. Relative paths are relative to the
config file. A secret is \`{"env": "NAME"}\`, \`{"file": "path"}\` or the value itself; it is resolved once at
start and printed as \`[secret]\` everywhere. Unknown keys are warnings, not errors; every real problem is
listed at once and the process exits 2. Each user's Claude Code token is not in this file: users link their
own with \`/link\`, sealed at rest with \`secretsKey\`.`,
    schema: ConfigFileSchema,
    regenerate: 'Run `npm run docs:config` after changing src/config/config.ts.',
  });
}
