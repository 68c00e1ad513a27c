/** `discord.guildIds` is enforced: another guild gets no answer and no run; with `leaveOtherGuilds` the bot leaves it. */
import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, ALICE_TOKEN, CHANNEL_ID, GUILD_ID, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const OTHER_GUILD = { id: '789', name: 'Someone else', channels: [{ id: '3000', name: 'lobby' }] };
const script = [{ reply: [{ type: 'text' as const, text: 'hello there' }], times: 'always' as const }];

describe('guildIds', () => {
  it('a message or a command in a guild not listed gets no answer and starts no run', async () => {
    h = await startHarness({ script, otherGuilds: [OTHER_GUILD] });
    await h.link(ALICE, ALICE_TOKEN);
    const foreign = h.discord.postMessage({
      channelId: '3000',
      author: ALICE,
      content: `<@${h.discord.bot.id}> answer me here`,
      mentions: [h.discord.bot],
    });
    const command = h.discord.slashCommand({ channelId: '3000', user: ALICE, name: 'ask', options: { prompt: 'hi' } });
    // A message in the listed guild after them: once it is answered, the ones before were handled too.
    const { message } = await h.mention(ALICE, 'and here?');
    expect(await h.settled(message)).toBe('✅');
    expect(h.discord.messages('3000').filter((m) => m.author.id === h!.discord.bot.id)).toEqual([]);
    expect(h.discord.reactions(foreign.id)).toEqual([]);
    expect(h.discord.threads().filter((t) => t.guildId === OTHER_GUILD.id)).toEqual([]);
    expect(command.callbacks).toEqual([]);
    expect(h.mainRequests()).toHaveLength(1);
    expect(h.mainRequests()[0]!.lastUserText).toContain('and here?');
    // Without leaveOtherGuilds it stays in the other guild, silent.
    expect(h.discord.guilds()).toContain(OTHER_GUILD.id);
    expect(h.discord.commands(OTHER_GUILD.id)).toEqual([]);
    expect(h.discord.channel(CHANNEL_ID)?.guildId).toBe(GUILD_ID);
  });

  it('with leaveOtherGuilds it leaves the other guilds at start and any guild it is added to later', async () => {
    h = await startHarness({
      script,
      otherGuilds: [OTHER_GUILD],
      config: (c) => (c.discord.leaveOtherGuilds = true),
    });
    const leaves = () =>
      h!.discord.rest.filter((r) => r.method === 'DELETE' && r.path.startsWith('/users/@me/guilds/'));
    await h.discord.waitFor(() => !h!.discord.guilds().includes(OTHER_GUILD.id), { label: 'leaving guild 789' });
    expect(leaves().map((r) => [r.path, r.status])).toEqual([['/users/@me/guilds/789', 204]]);

    h.discord.addGuild({ id: '790', name: 'Added later', channels: [{ id: '3100', name: 'chat' }] });
    await h.discord.waitFor(() => !h!.discord.guilds().includes('790'), { label: 'leaving guild 790' });
    expect(leaves().map((r) => r.path)).toEqual(['/users/@me/guilds/789', '/users/@me/guilds/790']);
    expect(h.discord.guilds()).toEqual([GUILD_ID]);

    // The listed guild still works.
    await h.link(ALICE, ALICE_TOKEN);
    const { message } = await h.mention(ALICE, 'still here?');
    expect(await h.settled(message)).toBe('✅');
  });
});
