import { SlashCommandBuilder, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';

/** The bot's slash commands, registered at boot (per guild in `discord.guildIds`, else globally). */
export function commandDefinitions(): RESTPostAPIChatInputApplicationCommandsJSONBody[] {
  return [
    new SlashCommandBuilder()
      .setName('link')
      .setDescription('Link your own Claude Code token (the output of `claude setup-token`)'),
    new SlashCommandBuilder().setName('link-github').setDescription('Link a GitHub token for agentic mode (optional)'),
    new SlashCommandBuilder().setName('unlink').setDescription('Remove your linked tokens from this bot'),
    new SlashCommandBuilder()
      .setName('mode')
      .setDescription("Set this thread's mode")
      .addStringOption((option) =>
        option
          .setName('mode')
          .setDescription('chat: web search only; agentic: files and commands in a sandboxed workspace')
          .setRequired(true)
          .addChoices({ name: 'chat', value: 'chat' }, { name: 'agentic', value: 'agentic' }),
      ),
    new SlashCommandBuilder()
      .setName('model')
      .setDescription("Set this thread's Claude model")
      .addStringOption((option) =>
        option
          .setName('model')
          .setDescription('A model name, e.g. claude-sonnet-4-5, or "default"')
          .setRequired(true)
          .setMaxLength(100),
      ),
    new SlashCommandBuilder()
      .setName('ask')
      .setDescription('Ask Claude one question; only you see the answer')
      .addStringOption((option) =>
        option.setName('prompt').setDescription('Your question').setRequired(true).setMaxLength(4000),
      ),
    new SlashCommandBuilder()
      .setName('reset')
      .setDescription("Stop this thread's reply and start a new Claude session"),
  ].map((builder) => builder.toJSON());
}
