import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { NewEvent } from '@bubble/protocol';
import { BubbleApiError, BubbleClient } from '@bubble/sdk';
import { createHumanPrincipal, type BubbleStore } from '@bubble/server';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { ModelMode } from './launch-options.js';
import { mintStoreToken, tokenWorks } from './store-token.js';
import { welcomeNote } from './welcome-note.js';

export const HUMAN_ID = 'you';
export const BOT_ID = 'claude';
export const WELCOME_KEY = 'welcome';

/**
 * What `npm start` made on its first run, kept beside the database so a second
 * run reuses it. Tokens are stored in plaintext here because the server keeps
 * only their hashes: the file is written with mode 0600.
 */
const LaunchStateSchema = z.object({
  userToken: z.string().optional(),
  botToken: z.string().optional(),
  welcomeThreadId: z.string().optional(),
  /** The model mode the welcome thread last described. */
  notedMode: z.enum(['claude', 'double']).optional(),
});
export type LaunchState = z.infer<typeof LaunchStateSchema>;

export function readLaunchState(path: string): LaunchState {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return {};
  }
  const parsed = LaunchStateSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${path} is not a launcher state file; move it away to start over`);
  return parsed.data;
}

/** Changes some fields of the state file (e.g. the bot's token, renewed), keeping the rest. */
export function updateLaunchState(path: string, patch: Partial<LaunchState>): void {
  writeLaunchState(path, { ...readLaunchState(path), ...patch });
}

function writeLaunchState(path: string, state: LaunchState): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.tmp`;
  writeFileSync(temp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, path);
}

export interface World {
  readonly userToken: string;
  readonly botToken: string;
  readonly welcomeThreadId: string;
  /** Principals whose saved token no longer worked (revoked in the web UI) and were given a new one on this start. */
  readonly renewed: readonly string[];
}

/**
 * Makes (once) the human `you`, the bot `claude` owned by `you`, and the
 * welcome thread with both, saving each step as soon as it is done so an
 * interrupted first run resumes where it stopped. Posts the welcome note (as
 * the bot) when the thread has not yet described the current model mode.
 */
export async function ensureWorld(options: {
  statePath: string;
  store: BubbleStore;
  serverUrl: string;
  mode: ModelMode;
  logger: Logger;
}): Promise<World> {
  const { statePath, logger } = options;
  const state = readLaunchState(statePath);
  const save = () => writeLaunchState(statePath, state);
  const renewed: string[] = [];
  // A token revoked while Bubble was stopped (Sessions and tokens, Bots) is replaced: the launcher owns both.
  const renew = async (principalId: string, token: string | undefined): Promise<string | undefined> => {
    if (token === undefined || (await tokenWorks(options.store, token, principalId))) return token;
    if ((await options.store.getPrincipal(principalId)) === null)
      throw new Error(
        `${statePath} names a principal "${principalId}" that this data folder does not have; move that file away to start over`,
      );
    renewed.push(principalId);
    logger.info({ principalId }, 'the saved token no longer worked; minted a new one');
    return (await mintStoreToken(options.store, principalId)).token;
  };
  const userToken = await renew(HUMAN_ID, state.userToken);
  const botToken = await renew(BOT_ID, state.botToken);
  if (userToken !== state.userToken || botToken !== state.botToken) {
    state.userToken = userToken;
    state.botToken = botToken;
    save();
  }

  if (state.userToken === undefined) {
    try {
      const created = await createHumanPrincipal(options.store, HUMAN_ID, 'You');
      state.userToken = created.token.token ?? undefined;
    } catch (error) {
      throw new Error(
        `the data folder already has a principal "${HUMAN_ID}" but no launcher state (${statePath}); use a fresh --data folder, or restore that file (${(error as Error).message})`,
      );
    }
    save();
    logger.info({ principalId: HUMAN_ID }, 'created the human');
  }
  const you = new BubbleClient({ url: options.serverUrl, token: state.userToken!, logger });
  try {
    if (state.botToken === undefined) {
      try {
        const { token } = await you.createBot({ principalId: BOT_ID, displayName: BOT_ID });
        state.botToken = token.token ?? undefined;
      } catch (error) {
        if (!(error instanceof BubbleApiError && error.code === 'conflict')) throw error;
        // Made on an earlier run that stopped before saving: mint a fresh token.
        state.botToken = (await you.mintToken(BOT_ID)).token ?? undefined;
      }
      save();
      logger.info({ principalId: BOT_ID }, 'created the bot');
    }
    if (state.welcomeThreadId === undefined) {
      const { thread } = await you.createThread({ title: 'Welcome to Bubble', key: WELCOME_KEY });
      await you.addParticipant(thread.threadId, BOT_ID, 'member');
      state.welcomeThreadId = thread.threadId;
      save();
      logger.info({ threadId: thread.threadId }, 'created the welcome thread');
    }
    if (state.notedMode !== options.mode) {
      const bot = new BubbleClient({ url: options.serverUrl, token: state.botToken!, logger });
      try {
        const runId = `launcher-note-${options.mode}-${Date.now()}`;
        const text = welcomeNote(options.mode);
        const events: NewEvent[] = [
          { type: 'run_started', data: { runId } },
          { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 'note' } } },
          { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 'note', delta: text } } },
          { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 'note' } } },
          { type: 'run_finished', data: { runId, status: 'completed' } },
        ];
        await bot.appendEvents(state.welcomeThreadId, events);
      } finally {
        bot.close();
      }
      state.notedMode = options.mode;
      save();
    }
  } finally {
    you.close();
  }
  return {
    userToken: state.userToken!,
    botToken: state.botToken!,
    welcomeThreadId: state.welcomeThreadId!,
    renewed,
  };
}
