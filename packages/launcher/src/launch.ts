import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_SCRIPT, startModelDouble, type ModelDouble, type Script } from '@bubble/model-double';
import { createBubbleServer, type BubbleServer } from '@bubble/server';
import { pino, type Logger } from 'pino';
import { acquireDataLock } from './data-lock.js';
import { BOT_ID, ensureWorld, HUMAN_ID, updateLaunchState } from './first-run.js';
import type { ModelMode } from './launch-options.js';
import { superviseScuba, type ScubaProcessOptions, type ScubaSupervisor } from './scuba-process.js';
import { mintStoreToken, tokenWorks } from './store-token.js';

const here = dirname(fileURLToPath(import.meta.url));
/** packages/web/dist, built by `npm ci` (the root `prepare`) or on demand below. */
export const DEFAULT_WEB_ROOT = resolve(here, '../../web/dist');
export const SCUBA_BIN = resolve(here, '../../claude-scuba/bin/claude-scuba.js');

export interface LaunchOptions {
  dataDir: string;
  host?: string;
  port?: number;
  /** `claude` when the environment holds a Claude credential; `double` otherwise. */
  mode: ModelMode;
  /** The environment the bot's process starts from (main.ts passes process.env). */
  env: NodeJS.ProcessEnv;
  logger?: Logger;
  /**
   * Plain sentences for the person running it: the web app being built, a
   * token renewed, the bot restarting or given up on. main.ts prints them.
   */
  notice?: (sentence: string) => void;
  /** Script for the model double; default the double's built-in demo (`DEMO_SCRIPT`), which the welcome note offers. */
  doubleScript?: Script;
  /** Extra keys for claude-scuba's `claude` config section (tests: `{ tools: ['Bash'] }`). */
  claudeConfig?: Record<string, unknown>;
  webRoot?: string;
  /** Build the web app when its dist is missing (default true). */
  buildWebIfMissing?: boolean;
  /** claude-scuba's restart policy (tests make it quick); see `superviseScuba`. */
  scubaRestart?: Pick<ScubaProcessOptions, 'restartBaseMs' | 'restartMaxMs' | 'maxFailures' | 'stableMs'>;
}

export interface Launched {
  readonly url: string;
  /** `http://HOST:PORT/threads/<welcome>#token=bubble_user_…`: the token travels in the fragment, never to a server log. */
  readonly signInLink: string;
  readonly userToken: string;
  /** The bot's current token (renewed when it is revoked). */
  readonly botToken: string;
  readonly welcomeThreadId: string;
  readonly server: BubbleServer;
  readonly double: ModelDouble | undefined;
  readonly scuba: ScubaSupervisor;
  readonly scubaLogPath: string;
  /** Stops claude-scuba, the double and the server, in that order. */
  stop(): Promise<void>;
}

function ensureWebBuilt(webRoot: string, notice: (sentence: string) => void): void {
  if (existsSync(join(webRoot, 'index.html'))) return;
  notice(`the web app is not built yet (${webRoot}); building it with npm run build -w @bubble/web, once`);
  const result = spawnSync('npm', ['run', 'build', '-w', '@bubble/web'], {
    cwd: resolve(here, '../../..'),
    stdio: 'inherit',
  });
  if (result.status !== 0)
    throw new Error(
      'building the web app failed: run npm run build -w @bubble/web to see why (after npm ci, if node_modules is missing)',
    );
}

/** The whole product on one machine: server + web UI, first-run world, model double when needed, the bot. */
export async function launch(options: LaunchOptions): Promise<Launched> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const notice = (sentence: string): void => {
    logger.info(sentence);
    options.notice?.(sentence);
  };
  const dataDir = resolve(options.dataDir);
  const launcherDir = join(dataDir, 'launcher');
  mkdirSync(launcherDir, { recursive: true });
  // Before anything is built, opened or written: a second launcher on this folder changes nothing.
  const lock = acquireDataLock(join(launcherDir, 'launcher.lock'), dataDir);
  if (lock.tookOverFrom !== undefined)
    logger.info({ pid: lock.tookOverFrom }, 'took over the lock of a launcher that is gone');
  let server: BubbleServer;
  try {
    const webRoot = options.webRoot ?? DEFAULT_WEB_ROOT;
    if (options.buildWebIfMissing ?? true) ensureWebBuilt(webRoot, notice);
    server = await createBubbleServer({
      dataDir,
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 7777,
      webRoot,
      logger: logger.child({ service: 'bubble-server' }),
    });
  } catch (error) {
    lock.release();
    throw error;
  }
  lock.setUrl(server.url);
  let double: ModelDouble | undefined;
  let scuba: ScubaSupervisor | undefined;
  try {
    const statePath = join(launcherDir, 'state.json');
    const world = await ensureWorld({
      statePath,
      store: server.store,
      serverUrl: server.url,
      mode: options.mode,
      logger,
    });
    if (world.renewed.includes(HUMAN_ID))
      notice('your saved sign-in token had been revoked; made a new one, so the sign-in link below is new');
    if (world.renewed.includes(BOT_ID)) notice(`the bot's saved token had been revoked; gave "${BOT_ID}" a new one`);
    const configPath = join(launcherDir, 'scuba.json');
    writeFileSync(
      configPath,
      `${JSON.stringify(
        {
          bubble: { url: server.url, principalId: BOT_ID, token: { env: 'BUBBLE_BOT_TOKEN' } },
          // The server's data folder (every thread, every token's state) is out of the bot's tools' reach too.
          claude: {
            workspaceRoot: './workspaces',
            configDir: './claude-home',
            privatePaths: [dataDir],
            ...options.claudeConfig,
          },
          approvals: { approvers: 'bot_owners' },
          store: { path: './scuba-state.db' },
          logger: { level: 'info' },
        },
        null,
        2,
      )}\n`,
    );
    let botToken = world.botToken;
    const env: NodeJS.ProcessEnv = { ...options.env };
    if (options.mode === 'double') {
      double = await startModelDouble({
        port: 0,
        host: '127.0.0.1',
        maxRecorded: 200,
        script: options.doubleScript ?? DEMO_SCRIPT,
      });
      delete env.CLAUDE_CODE_OAUTH_TOKEN;
      env.ANTHROPIC_API_KEY = 'bubble-offline-model-double';
      env.ANTHROPIC_BASE_URL = double.url;
    }
    const scubaLogPath = join(launcherDir, 'claude-scuba.log');
    const store = server.store;
    let renewals = 0;
    scuba = superviseScuba({
      bin: SCUBA_BIN,
      configPath,
      env: () => ({ ...env, BUBBLE_BOT_TOKEN: botToken }),
      logPath: scubaLogPath,
      logger,
      notice,
      ...options.scubaRestart,
      // The bot stops when its token is revoked (Bots → Revoke), and would fail at boot forever after:
      // the launcher owns the bot and has the store, so it gives it a new token, once per revocation.
      async repair() {
        if (await tokenWorks(store, botToken, BOT_ID)) return false;
        const minted = await mintStoreToken(store, BOT_ID);
        botToken = minted.token;
        updateLaunchState(statePath, { botToken });
        renewals += 1;
        notice(
          `the bot's token was refused (revoked in the web UI?); gave "${BOT_ID}" a new one (${minted.tokenId}) and restarted it` +
            (renewals > 1 ? ` (${renewals} times since start)` : ''),
        );
        return true;
      },
    });
    const running = scuba;
    let stopped: Promise<void> | undefined;
    return {
      url: server.url,
      signInLink: `${server.url}/threads/${encodeURIComponent(world.welcomeThreadId)}#token=${world.userToken}`,
      userToken: world.userToken,
      get botToken() {
        return botToken;
      },
      welcomeThreadId: world.welcomeThreadId,
      server,
      double,
      scuba: running,
      scubaLogPath,
      stop() {
        stopped ??= (async () => {
          try {
            await running.stop();
            await double?.close();
            await server.close();
          } finally {
            lock.release();
          }
        })();
        return stopped;
      },
    };
  } catch (error) {
    await scuba?.stop();
    await double?.close();
    await server.close();
    lock.release();
    throw error;
  }
}
