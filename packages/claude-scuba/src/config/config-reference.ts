import { renderConfigReference } from '@bubble/engine';
import { ScubaConfigFileSchema } from './config-schema.js';

/** claude-scuba's CONFIG.md, rendered from the schema (`npm run docs:config` writes it). */
export function scubaConfigReference(): string {
  return renderConfigReference({
    title: 'claude-scuba config reference',
    intro: `
\`npx claude-scuba --config scuba.json\` reads one JSON file. Only \`bubble\` is required; every other key has
the default shown. Relative paths are relative to the config file. A secret is \`{"env": "NAME"}\`,
\`{"file": "path"}\` or the value itself; it is resolved once at start and printed as \`[secret]\` everywhere.
Unknown keys are warnings, not errors; every real problem is listed at once and the process exits 2.

The engine credential: \`claude.oauthToken\` or \`claude.apiKey\` when given, else \`CLAUDE_CODE_OAUTH_TOKEN\`,
else \`ANTHROPIC_API_KEY\` from the environment; \`ANTHROPIC_BASE_URL\` likewise unless \`claude.baseUrl\` is set.`,
    schema: ScubaConfigFileSchema,
    regenerate: 'Run `npm run docs:config` after changing src/config/config-schema.ts.',
  });
}
