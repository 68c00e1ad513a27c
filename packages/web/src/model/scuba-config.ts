/**
 * The `claude-scuba` config that runs a bot against this server. The token is
 * never written into it: it is read from the BUBBLE_BOT_TOKEN variable.
 */
export function scubaConfigSnippet(serverUrl: string, principalId: string): string {
  const config = {
    bubble: { url: serverUrl, principalId, token: { env: 'BUBBLE_BOT_TOKEN' } },
    claude: { workspaceRoot: './.scuba/workspaces', configDir: './.scuba/claude' },
    store: { path: './.scuba/state.db' },
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
