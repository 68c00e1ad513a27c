import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATABASE_FILE_NAME } from '@bubble/server';
import type { EventEnvelope } from '@bubble/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startScubaWorld, waitForLog, type ScubaProcess, type ScubaWorld } from './support/scuba-world.js';
import { botPart, outputText } from './support/turn-helpers.js';

/**
 * Two bots on one host, each set up as the README's "One Unix user per bot"
 * says (issue 28, finding 2): a `useradd --system` user each, a 0700 state
 * folder of its own, its config its user's 0600 and its env file root's 0600
 * in one config folder, the server's data folder the server's alone, real
 * bubblewrap. Each bot's approved `cat` and `grep -r` try the other's `.env`,
 * config, transcripts and database, the server's database and a world-readable
 * file in the host's /tmp: every one is refused, and its own workspace reads.
 *
 * It needs root (useradd, setpriv), as CI runs: as anyone else it fails and
 * says so, rather than skip and leave the claim unproven.
 */
let world: ScubaWorld | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await world?.close();
  world = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const MARKER = 'TWO-BOTS-SECRET';
/** The PATH a systemd unit gives its service (the test's own may name folders under /root). */
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

interface BotSetup {
  name: 'a' | 'b';
  user: string;
  botId: string;
  token: string;
  threadId: string;
  state: string;
  configPath: string;
  envPath: string;
  process?: ScubaProcess;
}

/** `useradd --system` as the README does; removed after the test. */
function addUser(name: string, home: string): void {
  execFileSync('useradd', [
    '--system',
    '--user-group',
    '--no-create-home',
    '--home-dir',
    home,
    '--shell',
    '/usr/sbin/nologin',
    name,
  ]);
  cleanups.push(() => {
    try {
      execFileSync('userdel', [name]);
    } catch {
      // already gone
    }
  });
}

/** The `KEY=value` lines of an env file, as systemd's EnvironmentFile= reads them (as root). */
function readEnvFile(path: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

describe('two bots on one host, each its own Unix user', () => {
  it("neither bot's approved commands read the other's .env, config, transcripts or database, the server's database or the host's /tmp", async () => {
    if (process.getuid?.() !== 0)
      throw new Error(
        'e2e-two-bots needs root (it makes two Unix users with useradd and runs the bots with setpriv); run it as root, as CI does',
      );
    world = await startScubaWorld({ script: [] });
    const w = world;
    // The layout lives in the world's folder: traversable, as /etc and /var/lib are.
    chmodSync(w.dir, 0o755);
    const etc = join(w.dir, 'etc-bubble');
    mkdirSync(etc, { mode: 0o755 });
    chmodSync(etc, 0o755);
    const hostTmp = mkdtempSync('/tmp/two-bots-host-');
    cleanups.push(() => rmSync(hostTmp, { recursive: true, force: true }));
    chmodSync(hostTmp, 0o755);
    const hostFile = join(hostTmp, 'notes.txt');
    writeFileSync(hostFile, `${MARKER} in the host's /tmp\n`, { mode: 0o644 });
    chmodSync(hostFile, 0o644);
    const serverDb = join(w.server.dataDir, DATABASE_FILE_NAME);

    const suffix = Math.random().toString(36).slice(2, 6);
    const { token: tokenB } = await w.alice.createBot({ principalId: 'bot-other', displayName: 'Other bot' });
    const { thread: threadB } = await w.alice.createThread({ title: 'thread of bot b' });
    await w.alice.addParticipant(threadB.threadId, 'bot-other', 'member');
    const bots: BotSetup[] = [
      { name: 'a' as const, botId: w.botId, token: w.botToken, threadId: w.threadId },
      { name: 'b' as const, botId: 'bot-other', token: tokenB.token!, threadId: threadB.threadId },
    ].map((bot) => {
      const user = `bubble-bot-${bot.name}-${suffix}`;
      const state = join(w.dir, `var-${bot.name}`);
      addUser(user, state);
      const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
      // systemd's StateDirectory= with StateDirectoryMode=0700: the bot's user's alone.
      mkdirSync(state, { mode: 0o700 });
      chownSync(state, uid, gid);
      const configPath = join(etc, `${bot.name}.json`);
      writeFileSync(
        configPath,
        JSON.stringify({
          bubble: { url: w.server.url, principalId: bot.botId, token: { env: 'BUBBLE_BOT_TOKEN' } },
          claude: {
            workspaceRoot: join(state, 'workspaces'),
            configDir: join(state, 'claude'),
            tools: ['Bash'],
          },
          store: { path: join(state, 'state.db') },
          limits: { spareEngines: 0 },
          logger: { level: 'info' },
        }),
        { mode: 0o600 },
      );
      chownSync(configPath, uid, gid);
      const envPath = join(etc, `${bot.name}.env`);
      writeFileSync(
        envPath,
        `BUBBLE_BOT_TOKEN=${bot.token}\nANTHROPIC_API_KEY=sk-test-double-${bot.name}\n# ${MARKER} in the env file of bot ${bot.name}\n`,
        { mode: 0o600 },
      );
      return { ...bot, user, state, configPath, envPath };
    });

    const after = {
      name: 'after',
      match: { toolResult: true as const },
      reply: [{ type: 'text' as const, text: 'Done.' }],
      times: 'always' as const,
    };
    const probeOf = (me: BotSetup, other: BotSetup): string => {
      // Paths through variables, so the CLI cannot see them before the command runs: the bot asks, a person
      // approves, and the sandbox and the Unix permissions have the last word.
      const rows: Array<[string, string]> = [
        ['own-workspace', 'echo "$M mine" > mine.txt && grep -q "$M" "$PWD/mine.txt"'],
        ['other-env', `grep -q "$M" "$E/${other.name}.env"`],
        ['other-config', `cat "$E/${other.name}.json"`],
        ['other-transcripts', 'test -n "$(grep -rl . "$O/claude" 2>/dev/null)"'],
        ['other-state-db', 'head -c 16 "$O/state.db" | grep -q SQLite'],
        ['server-db', 'head -c 16 "$S" | grep -q SQLite'],
        ['host-tmp', 'grep -q "$M" "$H"'],
        ['own-env', `grep -q "$M" "$E/${me.name}.env"`],
      ];
      return [
        `M=${MARKER}; E=${etc}; O=${other.state}; S=${serverDb}; H=${hostFile}`,
        'r() { if eval "$2" >/dev/null 2>&1; then echo "ROW $1 read"; else echo "ROW $1 denied"; fi; }',
        ...rows.map(([label, command]) => `r ${label} '${command}'`),
        `echo "GREP=[$(timeout 10 grep -rl "$M" "$E" "$O" "$(dirname "$S")" "$(dirname "$H")" "$PWD" 2>/dev/null | tr '\\n' ' ')]"`,
        'echo "WHO=$(id -un 2>/dev/null || id -u)"',
      ].join('\n');
    };
    w.double.setScript([
      {
        name: 'hello',
        match: { text: 'hello' },
        reply: [{ type: 'text', text: `Hello, ${MARKER} noted.` }],
        times: 'always',
      },
      ...bots.map((me) => ({
        name: `probe-${me.name}`,
        match: { text: `probe as ${me.name}` },
        reply: [
          {
            type: 'tool_use' as const,
            id: `toolu_probe_${me.name}`,
            name: 'Bash',
            input: { command: probeOf(me, bots.find((b) => b !== me)!), description: 'probe' },
          },
        ],
      })),
      after,
    ]);

    for (const bot of bots) {
      bot.process = w.startBot({
        configPath: bot.configPath,
        asUser: bot.user,
        env: {
          PATH: SYSTEM_PATH,
          HOME: bot.state,
          BOT_TOKEN: '',
          ANTHROPIC_BASE_URL: w.double.url,
          ...readEnvFile(bot.envPath),
        },
      });
    }
    for (const bot of bots) {
      await waitForLog(
        bot.process!,
        (l) => l.msg === "tools run in Claude Code's sandbox",
        `bot ${bot.name}'s sandbox on`,
      );
      await waitForLog(bot.process!, (l) => l.msg === 'claude-scuba running', `bot ${bot.name} running`);
    }

    const finished = (bot: BotSetup, all: EventEnvelope[]) =>
      all.filter((e) => e.principalId === bot.botId && e.type === 'run_finished').length;
    /** Alice says `text` on `threadId`: one complete run. */
    const sayOn = (threadId: string, text: string) => {
      const runId = `h-${Math.random().toString(36).slice(2, 10)}`;
      return w.alice.appendEvents(threadId, [
        { type: 'run_started', data: { runId } },
        { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't0' } } },
        { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't0', delta: text } } },
        { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't0' } } },
        { type: 'run_finished', data: { runId, status: 'completed' } },
      ]);
    };
    // A first turn each, so each has a transcript in its CLI's home for the other to look for.
    for (const bot of bots) {
      await sayOn(bot.threadId, 'hello');
      await w.waitFor((all) => finished(bot, all) >= 1, { threadId: bot.threadId, what: `bot ${bot.name}'s hello` });
    }
    // Made by the bots themselves, as their own users: 0700 folders, a 0600 database.
    for (const bot of bots) {
      for (const dir of ['claude', 'workspaces'])
        expect([bot.name, dir, (readFileMode(join(bot.state, dir)) & 0o777).toString(8)]).toEqual([
          bot.name,
          dir,
          '700',
        ]);
      expect((readFileMode(join(bot.state, 'state.db')) & 0o777).toString(8)).toBe('600');
      expect(execFileSync('grep', ['-rl', MARKER, join(bot.state, 'claude')], { encoding: 'utf8' })).not.toBe('');
    }

    const results: Record<string, string> = {};
    for (const bot of bots) {
      const before = finished(bot, await w.events(bot.threadId));
      await sayOn(bot.threadId, `probe as ${bot.name}`);
      const id = `toolu_probe_${bot.name}`;
      await w.waitFor((all) => all.some(botPart(bot, 'tool-approval-request', id)), {
        threadId: bot.threadId,
        what: `bot ${bot.name}'s approval request`,
      });
      await w.alice.appendEvent(bot.threadId, {
        type: 'tool_call_approval',
        data: { toolCallId: id, decision: 'allow' },
      });
      const events = await w.waitFor(
        (all) => all.some(botPart(bot, 'tool-output-available', id)) && finished(bot, all) > before,
        { threadId: bot.threadId, what: `bot ${bot.name}'s probe output`, timeoutMs: 60_000 },
      );
      results[bot.name] = outputText(events.find(botPart(bot, 'tool-output-available', id))!);
    }
    console.log(
      `two bots, each probing the other:\n${bots.map((b) => `bot ${b.name}:\n${results[b.name]}`).join('\n')}`,
    );

    for (const bot of bots) {
      const seen = results[bot.name]!;
      const measured = Object.fromEntries([...seen.matchAll(/^ROW (\S+) (read|denied)$/gm)].map((m) => [m[1], m[2]]));
      expect([bot.name, measured]).toEqual([
        bot.name,
        {
          'own-workspace': 'read',
          'other-env': 'denied',
          'other-config': 'denied',
          'other-transcripts': 'denied',
          'other-state-db': 'denied',
          'server-db': 'denied',
          'host-tmp': 'denied',
          'own-env': 'denied',
        },
      ]);
      // One search over every folder with a secret in it finds only the bot's own file.
      const workspace = join(bot.state, 'workspaces', bot.threadId);
      expect(seen).toContain(`GREP=[${join(workspace, 'mine.txt')} ]`);
      // The command ran as the bot's own user.
      expect(seen).toMatch(new RegExp(`^WHO=(${bot.user}|\\d+)$`, 'm'));
      expect(seen).not.toContain(bots.find((b) => b !== bot)!.token);
    }
  }, 240_000);
});

function readFileMode(path: string): number {
  return statSync(path).mode;
}
