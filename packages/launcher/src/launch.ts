import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModelDouble, type ModelDouble, type Script } from '@bubble/model-double';
import { createBubbleServer, type BubbleServer } from '@bubble/server';
import { pino, type Logger } from 'pino';
import { BOT_ID, ensureWorld } from './first-run.js';
import type { ModelMode } from './launch-options.js';
import { superviseScuba, type ScubaSupervisor } from './scuba-process.js';

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
  /** Script for the model double (tests); without one it answers every turn with its offline reply. */
  doubleScript?: Script;
  /** Extra keys for claude-scuba's `claude` config section (tests: `{ tools: ['Bash'] }`). */
  claudeConfig?: Record<string, unknown>;
  webRoot?: string;
  /** Build the web app when its dist is missing (default true). */
  buildWebIfMissing?: boolean;
}

export interface Launched {
  readonly url: string;
  /** `http://HOST:PORT/threads/<welcome>#token=bubble_user_…`: the token travels in the fragment, never to a server log. */
  readonly signInLink: string;
  readonly userToken: string;
  readonly botToken: string;
  readonly welcomeThreadId: string;
  readonly server: BubbleServer;
  readonly double: ModelDouble | undefined;
  readonly scuba: ScubaSupervisor;
  readonly scubaLogPath: string;
  /** Stops claude-scuba, the double and the server, in that order. */
  stop(): Promise<void>;
}

function ensureWebBuilt(webRoot: string, logger: Logger): void {
  if (existsSync(join(webRoot, 'index.html'))) return;
  logger.warn({ webRoot }, 'the web app is not built yet; building it');
  const result = spawnSync('npm', ['run', 'build', '-w', '@bubble/web'], {
    cwd: resolve(here, '../../..'),
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error('building the web app failed (npm run build -w @bubble/web)');
}

/** The whole product on one machine: server + web UI, first-run world, model double when needed, the bot. */
export async function launch(options: LaunchOptions): Promise<Launched> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const dataDir = resolve(options.dataDir);
  const launcherDir = join(dataDir, 'launcher');
  mkdirSync(launcherDir, { recursive: true });
  const webRoot = options.webRoot ?? DEFAULT_WEB_ROOT;
  if (options.buildWebIfMissing ?? true) ensureWebBuilt(webRoot, logger);

  const server = await createBubbleServer({
    dataDir,
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 7777,
    webRoot,
    logger: logger.child({ service: 'bubble-server' }),
  });
  let double: ModelDouble | undefined;
  let scuba: ScubaSupervisor | undefined;
  try {
    const world = await ensureWorld({
      statePath: join(launcherDir, 'state.json'),
      store: server.store,
      serverUrl: server.url,
      mode: options.mode,
      logger,
    });
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
    const env: NodeJS.ProcessEnv = { ...options.env, BUBBLE_BOT_TOKEN: world.botToken };
    if (options.mode === 'double') {
      double = await startModelDouble({
        port: 0,
        host: '127.0.0.1',
        maxRecorded: 200,
        ...(options.doubleScript ? { script: options.doubleScript } : {}),
      });
      delete env.CLAUDE_CODE_OAUTH_TOKEN;
      env.ANTHROPIC_API_KEY = 'bubble-offline-model-double';
      env.ANTHROPIC_BASE_URL = double.url;
    }
    const scubaLogPath = join(launcherDir, 'claude-scuba.log');
    scuba = superviseScuba({ bin: SCUBA_BIN, configPath, env, logPath: scubaLogPath, logger });
    const running = scuba;
    let stopped: Promise<void> | undefined;
    return {
      url: server.url,
      signInLink: `${server.url}/threads/${encodeURIComponent(world.welcomeThreadId)}#token=${world.userToken}`,
      userToken: world.userToken,
      botToken: world.botToken,
      welcomeThreadId: world.welcomeThreadId,
      server,
      double,
      scuba: running,
      scubaLogPath,
      stop() {
        stopped ??= (async () => {
          await running.stop();
          await double?.close();
          await server.close();
        })();
        return stopped;
      },
    };
  } catch (error) {
    await scuba?.stop();
    await double?.close();
    await server.close();
    throw error;
  }
}
