/** Each error class, end to end: what the thread reads, what the log keeps. */
import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, ALICE_TOKEN, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('errors', () => {
  it('an expired or revoked token tells that user to run `claude setup-token` and /link again', async () => {
    h = await startHarness({
      script: [
        {
          error: {
            status: 401,
            message: 'OAuth token has expired. Please obtain a new token or refresh your existing token.',
          },
          times: 'always',
        },
      ],
    });
    await h.link(ALICE, ALICE_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'hello');
    expect(await h.settled(message)).toBe('⚠️');
    expect(h.discord.reactions(message.id)).not.toContain('✅');
    const text = h.replyText(threadId);
    expect(text).toContain('<@2001>');
    expect(text).toContain('claude setup-token');
    expect(text).toContain('/link');
  });

  it('a rate limit says when it resets', async () => {
    const reset = Math.floor(Date.now() / 1000) + 3 * 3600;
    h = await startHarness({
      script: [
        {
          error: {
            status: 429,
            message: 'Rate limited',
            headers: {
              'anthropic-ratelimit-unified-status': 'rejected',
              'anthropic-ratelimit-unified-reset': String(reset),
              'anthropic-ratelimit-unified-representative-claim': 'five_hour',
              'anthropic-ratelimit-unified-5h-status': 'rejected',
              'anthropic-ratelimit-unified-5h-reset': String(reset),
            },
          },
          times: 'always',
        },
      ],
    });
    await h.link(ALICE, ALICE_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'hello');
    expect(await h.settled(message)).toBe('⚠️');
    const text = h.replyText(threadId);
    expect(text).toContain('usage limit');
    expect(text).toContain(`<t:${reset}:R>`);
  });

  it('anything else gets a short generic message with a reference, and the detail goes to the log', async () => {
    h = await startHarness({
      script: [
        { error: { status: 500, message: 'Internal server error: the double broke on purpose' }, times: 'always' },
      ],
    });
    await h.link(ALICE, ALICE_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'hello');
    expect(await h.settled(message)).toBe('⚠️');
    const text = h.replyText(threadId);
    const ref = /ref `([a-z0-9]+)`/.exec(text)?.[1];
    expect(ref).toBeDefined();
    expect(text).not.toContain('the double broke on purpose');
    const line = h.logLines.find((l) => l.ref === ref)!;
    expect(line.level).toBe(50);
    expect(String(line.detail)).toMatch(/500|Internal server error/);
  });
});
