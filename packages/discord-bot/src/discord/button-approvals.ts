import { randomBytes } from 'node:crypto';
import type { CanUseTool, PermissionResult } from '@anthropic-ai/claude-agent-sdk';
import type { Logger } from 'pino';
import type { StateStore } from '../store/state-store.js';

export type ApprovalChoice = 'once' | 'thread' | 'deny';
export const APPROVAL_PREFIX = 'bubble-approve';
/** Before an agentic turn in a workspace others changed: the sender runs it or not. */
export type ChangesChoice = 'run' | 'cancel';
export const CHANGES_PREFIX = 'bubble-changes';
type Choice = ApprovalChoice | ChangesChoice;
type Waited = { choice: Choice | 'timeout' | 'stopped'; by?: string };

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
  prefix: string;
  decide(choice: Choice, by: string): void;
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
      const choice = await this.#wait(id, APPROVAL_PREFIX, context.senderId, text, signal);
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
      if (choice.choice !== 'once' && choice.choice !== 'thread')
        return deny(`<@${context.senderId}> denied this tool call.`);
      if (choice.choice === 'thread') this.#store.grantTool(context.threadId, context.senderId, toolName);
      return allow(input);
    };
  }

  /**
   * Asks `senderId` whether their turn may run in a workspace other people's turns changed ("Run my turn" /
   * "Cancel"); only their click counts, and no click within the timeout is "timeout" (nothing runs).
   */
  async confirmChanges(context: {
    senderId: string;
    text: string;
    channel: ApprovalChannel;
    signal: AbortSignal;
  }): Promise<ChangesChoice | 'timeout' | 'stopped' | 'unshown'> {
    const id = randomBytes(12).toString('hex');
    let messageId: string;
    try {
      messageId = await context.channel.post(context.text, changesButtons(id));
    } catch (error) {
      this.#logger.warn({ err: error }, 'could not show the workspace changes; the turn does not run');
      return 'unshown';
    }
    const waited = await this.#wait(id, CHANGES_PREFIX, context.senderId, context.text, context.signal);
    if (waited.choice === 'timeout' || waited.choice === 'stopped') {
      const note =
        waited.choice === 'timeout'
          ? `⌛ No answer within ${Math.round(this.#timeoutMs / 1000)} s: the turn did not run.`
          : '⏹️ The reply stopped.';
      await context.channel
        .edit(messageId, `${context.text}\n${note}`)
        .catch((error: unknown) => this.#logger.debug({ err: error }, 'changes edit failed'));
      return waited.choice;
    }
    return waited.choice === 'run' ? 'run' : 'cancel';
  }

  /** Waits for the sender's click on request `id`, the timeout, or the run's end. */
  #wait(id: string, prefix: string, senderId: string, text: string, signal: AbortSignal): Promise<Waited> {
    return new Promise<Waited>((resolve) => {
      const timer = setTimeout(() => settle({ choice: 'timeout' }), this.#timeoutMs);
      const onAbort = (): void => settle({ choice: 'stopped' });
      const settle = (value: Waited): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.#pending.delete(id);
        resolve(value);
      };
      if (signal.aborted) return settle({ choice: 'stopped' });
      signal.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(id, { senderId, text, prefix, decide: (c, by) => settle({ choice: c, by }) });
    });
  }

  /** Handles a click on an approval button; false when the click is not one of ours. */
  async handleClick(click: ApprovalClick): Promise<boolean> {
    const parsed = parseCustomId(click.customId);
    if (parsed === undefined) return false;
    const pending = this.#pending.get(parsed.id);
    if (pending === undefined || pending.prefix !== parsed.prefix) {
      await click.replyPrivately('This request is no longer waiting (it was answered, timed out, or the reply ended).');
      return true;
    }
    if (click.user.id !== pending.senderId) {
      await click.replyPrivately(`Only <@${pending.senderId}>, who sent the message, can answer this request.`);
      return true;
    }
    const label = CHOICE_LABELS[parsed.choice];
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

const CHOICE_LABELS: Record<Choice, string> = {
  once: '✅ Allowed once',
  thread: '✅ Allowed in this thread',
  deny: '🚫 Denied',
  run: '▶️ Run',
  cancel: '✋ Cancelled',
};
const CHOICES: Record<string, readonly Choice[]> = {
  [APPROVAL_PREFIX]: ['once', 'thread', 'deny'],
  [CHANGES_PREFIX]: ['run', 'cancel'],
};

function parseCustomId(customId: string): { prefix: string; id: string; choice: Choice } | undefined {
  const [prefix, id, choice] = customId.split(':');
  if (prefix === undefined || id === undefined || !/^[0-9a-f]{24}$/.test(id)) return undefined;
  const allowed = Object.hasOwn(CHOICES, prefix) ? CHOICES[prefix]! : [];
  if (!allowed.includes(choice as Choice)) return undefined;
  return { prefix, id, choice: choice as Choice };
}

function changesButtons(id: string): unknown[] {
  return [
    {
      type: 1,
      components: [
        { type: 2, style: 3, label: 'Run my turn', custom_id: `${CHANGES_PREFIX}:${id}:run` },
        { type: 2, style: 2, label: 'Cancel', custom_id: `${CHANGES_PREFIX}:${id}:cancel` },
      ],
    },
  ];
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
