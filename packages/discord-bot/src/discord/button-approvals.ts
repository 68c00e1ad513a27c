import { randomBytes } from 'node:crypto';
import type { CanUseTool, PermissionResult } from '@anthropic-ai/claude-agent-sdk';
import type { Logger } from 'pino';
import type { StateStore } from '../store/state-store.js';

export type ApprovalChoice = 'once' | 'thread' | 'deny';
export const APPROVAL_PREFIX = 'bubble-approve';

/** Where a request is shown: a message with buttons in the thread, edited once it is answered. */
export interface ApprovalChannel {
  post(content: string, components: unknown[]): Promise<string>;
  edit(messageId: string, content: string): Promise<void>;
}

/** A button click, as much of it as the broker needs (discord.js's ButtonInteraction fits). */
export interface ApprovalClick {
  customId: string;
  user: { id: string };
  /** Answers the click by changing the request message (acknowledges it). */
  update(content: string): Promise<void>;
  /** Answers only the clicker. */
  replyPrivately(content: string): Promise<void>;
}

interface Pending {
  senderId: string;
  text: string;
  decide(choice: ApprovalChoice, by: string): void;
}

/**
 * Approvals by button (issue 14 §9): in agentic mode with `claude.approvals:
 * "buttons"`, a call of Write, Edit or Bash asks the turn's sender with Allow
 * once / Allow in this thread / Deny. Only the
 * sender's click counts; no click within the timeout denies. "Allow in this
 * thread" is remembered for that sender, tool and thread (until `/reset`).
 * Request ids are random, so a click cannot be forged by guessing.
 */
export class ButtonApprovals {
  readonly #pending = new Map<string, Pending>();
  readonly #store: StateStore;
  readonly #timeoutMs: number;
  readonly #logger: Logger;

  constructor(options: { store: StateStore; timeoutMs: number; logger: Logger }) {
    this.#store = options.store;
    this.#timeoutMs = options.timeoutMs;
    this.#logger = options.logger;
  }

  get pending(): number {
    return this.#pending.size;
  }

  /** The `canUseTool` of one turn: asks `senderId` in `channel`. */
  gate(context: { threadId: string; senderId: string; channel: ApprovalChannel }): CanUseTool {
    return async (toolName, input, { signal }) => {
      if (this.#store.isToolGranted(context.threadId, context.senderId, toolName)) return allow(input);
      const id = randomBytes(12).toString('hex');
      const text = `🔐 <@${context.senderId}>, Claude wants to use **${toolName}**:\n${describeInput(toolName, input)}`;
      let messageId: string;
      try {
        messageId = await context.channel.post(text, approvalButtons(id));
      } catch (error) {
        this.#logger.warn({ err: error, toolName }, 'could not post an approval request; denying');
        return deny('The approval request could not be shown in Discord.');
      }
      const choice = await new Promise<{ choice: ApprovalChoice | 'timeout' | 'stopped'; by?: string }>((resolve) => {
        const timer = setTimeout(() => settle({ choice: 'timeout' }), this.#timeoutMs);
        const onAbort = (): void => settle({ choice: 'stopped' });
        const settle = (value: { choice: ApprovalChoice | 'timeout' | 'stopped'; by?: string }): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          this.#pending.delete(id);
          resolve(value);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        this.#pending.set(id, { senderId: context.senderId, text, decide: (c, by) => settle({ choice: c, by }) });
      });
      if (choice.choice === 'timeout' || choice.choice === 'stopped') {
        const note =
          choice.choice === 'timeout'
            ? `⌛ No answer within ${Math.round(this.#timeoutMs / 1000)} s: denied.`
            : '⏹️ The reply stopped.';
        await context.channel
          .edit(messageId, `${text}\n${note}`)
          .catch((error: unknown) => this.#logger.debug({ err: error }, 'approval edit failed'));
        return deny(
          choice.choice === 'timeout'
            ? `Nobody answered the approval request within ${Math.round(this.#timeoutMs / 1000)} s.`
            : 'The reply was stopped.',
        );
      }
      if (choice.choice === 'deny') return deny(`<@${context.senderId}> denied this tool call.`);
      if (choice.choice === 'thread') this.#store.grantTool(context.threadId, context.senderId, toolName);
      return allow(input);
    };
  }

  /** Handles a click on an approval button; false when the click is not one of ours. */
  async handleClick(click: ApprovalClick): Promise<boolean> {
    const parsed = parseCustomId(click.customId);
    if (parsed === undefined) return false;
    const pending = this.#pending.get(parsed.id);
    if (pending === undefined) {
      await click.replyPrivately('This request is no longer waiting (it was answered, timed out, or the reply ended).');
      return true;
    }
    if (click.user.id !== pending.senderId) {
      await click.replyPrivately(`Only <@${pending.senderId}>, who sent the message, can answer this request.`);
      return true;
    }
    const label =
      parsed.choice === 'once'
        ? '✅ Allowed once'
        : parsed.choice === 'thread'
          ? '✅ Allowed in this thread'
          : '🚫 Denied';
    // Acknowledge first (Discord wants an answer within 3 s), then let the turn go on, even if the edit failed.
    try {
      await click.update(`${pending.text}\n${label} by <@${click.user.id}>.`);
    } finally {
      pending.decide(parsed.choice, click.user.id);
    }
    return true;
  }
}

function allow(input: Record<string, unknown>): PermissionResult {
  return { behavior: 'allow', updatedInput: input };
}

function deny(message: string): PermissionResult {
  return { behavior: 'deny', message };
}

function parseCustomId(customId: string): { id: string; choice: ApprovalChoice } | undefined {
  const [prefix, id, choice] = customId.split(':');
  if (prefix !== APPROVAL_PREFIX || id === undefined || !/^[0-9a-f]{24}$/.test(id)) return undefined;
  if (choice !== 'once' && choice !== 'thread' && choice !== 'deny') return undefined;
  return { id, choice };
}

function approvalButtons(id: string): unknown[] {
  const button = (choice: ApprovalChoice, label: string, style: number) => ({
    type: 2,
    style,
    label,
    custom_id: `${APPROVAL_PREFIX}:${id}:${choice}`,
  });
  return [
    {
      type: 1,
      components: [
        button('once', 'Allow once', 3),
        button('thread', 'Allow in this thread', 1),
        button('deny', 'Deny', 4),
      ],
    },
  ];
}

/** The call in a code block, short; backtick runs are broken so the block cannot be closed from inside. */
function describeInput(toolName: string, input: Record<string, unknown>): string {
  const main =
    typeof input.command === 'string'
      ? input.command
      : typeof input.file_path === 'string'
        ? input.file_path
        : JSON.stringify(input, null, 2);
  const clipped = main.length > 800 ? `${main.slice(0, 800)}…` : main;
  return `\`\`\`${toolName === 'Bash' ? 'sh' : ''}\n${clipped.replace(/`{3,}/g, (run) => run.split('').join('\u200b'))}\n\`\`\``;
}
