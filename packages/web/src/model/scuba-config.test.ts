import { describe, expect, it } from 'vitest';
import { scubaConfigSnippet } from './scuba-config';

describe('scubaConfigSnippet', () => {
  it('names the server and bot and reads the token from the environment', () => {
    const config = JSON.parse(scubaConfigSnippet('http://127.0.0.1:7777', 'bot-a'));
    expect(config.bubble).toEqual({
      url: 'http://127.0.0.1:7777',
      principalId: 'bot-a',
      token: { env: 'BUBBLE_BOT_TOKEN' },
    });
    expect(JSON.stringify(config)).not.toContain('bubble_agent_');
  });
});
