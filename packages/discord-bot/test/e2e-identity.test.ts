/** Every user's own token: /link, /unlink, refusal of pasted junk, nothing at rest in the clear, no instance-wide credential. */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, ALICE_TOKEN, BOB, CHANNEL_ID, requestToken, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  delete process.env.ANTHROPIC_API_KEY;
  delete process.env.CLAUDE_CODE_OAUTH_TOKEN;
  await h?.close();
  h = undefined;
});

/** Every byte the bot keeps on disk next to its store (the database and its WAL). */
function storeBytes(harness: Harness): string {
  const folder = dirname(harness.config.store.path);
  return readdirSync(folder)
    .filter((name) => name.startsWith('state.db'))
    .map((name) => readFileSync(`${folder}/${name}`).toString('latin1'))
    .join('');
}

describe('identity', () => {
  it('/link opens a one-field modal; the token is sealed at rest and never logged; /unlink removes it', async () => {
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: 'hi Alice' }], times: 'always' }] });
    const command = h.discord.slashCommand({ channelId: CHANNEL_ID, user: ALICE, name: 'link' });
    const modal = await h.discord.waitFor(() => command.callbacks.find((c) => c.type === 9));
    const inputs = (modal.data.components as Array<{ components: Array<{ type: number; custom_id: string }> }>).flatMap(
      (row) => row.components,
    );
    expect(inputs).toHaveLength(1);
    expect(inputs[0]!.type).toBe(4);
    const submit = h.discord.submitModal({
      channelId: CHANNEL_ID,
      user: ALICE,
      customId: modal.data.custom_id as string,
      fields: { token: ALICE_TOKEN },
    });
    const answer = await h.discord.waitFor(() => submit.callbacks[0]);
    expect(answer.data.content).toContain('Linked');
    expect(answer.data.flags & 64).toBe(64); // only Alice sees it

    const { message } = await h.mention(ALICE, 'hello');
    expect(await h.settled(message)).toBe('✅');
    expect(requestToken(h.mainRequests()[0]!)).toBe(ALICE_TOKEN);
    expect(storeBytes(h)).not.toContain(ALICE_TOKEN);
    expect(storeBytes(h)).not.toContain(ALICE_TOKEN.slice(12, 40));
    expect(JSON.stringify(h.logLines)).not.toContain(ALICE_TOKEN);

    const unlink = h.discord.slashCommand({ channelId: CHANNEL_ID, user: ALICE, name: 'unlink' });
    expect((await h.discord.waitFor(() => unlink.callbacks[0])).data.content).toContain('removed');
    const again = h.discord.postMessage({
      channelId: CHANNEL_ID,
      author: ALICE,
      content: `<@${h.discord.bot.id}> still there?`,
      mentions: [h.discord.bot],
    });
    const refusal = await h.discord.waitFor(() =>
      h!.botMessages(CHANNEL_ID).find((m) => m.messageReference?.messageId === again.id),
    );
    expect(refusal.content).toContain('/link');
    expect(h.mainRequests()).toHaveLength(1);
  });

  it('a pasted value that is not `claude setup-token` output is refused and nothing is stored', async () => {
    h = await startHarness();
    const answer = await h.link(ALICE, 'sk-ant-api03-this-is-an-api-key-not-an-oauth-token');
    expect(answer).toContain('does not look like the output of `claude setup-token`');
    const message = h.discord.postMessage({
      channelId: CHANNEL_ID,
      author: ALICE,
      content: `<@${h.discord.bot.id}> hi`,
      mentions: [h.discord.bot],
    });
    const refusal = await h.discord.waitFor(() =>
      h!.botMessages(CHANNEL_ID).find((m) => m.messageReference?.messageId === message.id),
    );
    expect(refusal.content).toContain('/link');
  });

  it('a user with no token gets a reply where they wrote, telling them to /link; nothing runs and no thread is made', async () => {
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: 'should not run' }], times: 'always' }] });
    const message = h.discord.postMessage({
      channelId: CHANNEL_ID,
      author: BOB,
      content: `<@${h.discord.bot.id}> help me`,
      mentions: [h.discord.bot],
    });
    const refusal = await h.discord.waitFor(() =>
      h!.botMessages(CHANNEL_ID).find((m) => m.messageReference?.messageId === message.id),
    );
    expect(refusal.channelId).toBe(CHANNEL_ID);
    expect(refusal.content).toContain('claude setup-token');
    expect(refusal.content).toContain('/link');
    expect(h.discord.threads()).toHaveLength(0);
    expect(h.model.requests).toHaveLength(0);
  });

  it("the bot's own ANTHROPIC_API_KEY and CLAUDE_CODE_OAUTH_TOKEN never reach a run", async () => {
    process.env.ANTHROPIC_API_KEY = 'sk-ant-api03-instance-wide-key-must-not-be-used';
    process.env.CLAUDE_CODE_OAUTH_TOKEN = 'sk-ant-oat01-instance-wide-token-must-not-be-used';
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: 'ok' }], times: 'always' }] });
    await h.link(ALICE, ALICE_TOKEN);
    const { message } = await h.mention(ALICE, 'hello');
    await h.settled(message);
    const request = h.mainRequests()[0]!;
    expect(requestToken(request)).toBe(ALICE_TOKEN);
    expect(JSON.stringify(request.headers)).not.toContain('instance-wide');
  });

  it('/link-github stores a GitHub token the same way; an agentic turn of that user sees it as GH_TOKEN', async () => {
    h = await startHarness({
      script: [
        {
          match: { text: 'show the token' },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, run by Bash in the sandbox
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'printf "len=%s" "${#GH_TOKEN}"' } }],
        },
        { match: { toolResult: true }, reply: [{ type: 'text', text: 'done' }] },
        { reply: [{ type: 'text', text: 'ok' }], times: 'always' },
      ],
    });
    await h.link(ALICE, ALICE_TOKEN);
    expect(await h.link(ALICE, 'github_pat_1234567890abcdef', 'github')).toContain('GitHub token linked');
    expect(storeBytes(h)).not.toContain('github_pat_1234567890abcdef');
    const { message, threadId } = await h.mention(ALICE, 'start');
    await h.settled(message);
    const mode = h.discord.slashCommand({
      channelId: threadId,
      user: ALICE,
      name: 'mode',
      options: { mode: 'agentic' },
    });
    await h.discord.waitFor(() => mode.callbacks[0]);
    const ask = h.say(threadId, ALICE, 'show the token');
    expect(await h.settled(ask)).toBe('✅');
    const toolTurn = h.mainRequests().find((r) => r.toolResults.length > 0)!;
    expect(JSON.stringify(toolTurn.body)).toContain(`len=${'github_pat_1234567890abcdef'.length}`);
  });
});
