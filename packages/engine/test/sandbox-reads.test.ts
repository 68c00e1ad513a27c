import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolationOptions, toolchainReadPaths } from '../src/index.js';
import { blocksOf, harnessFor } from './harness.js';

/**
 * What a sandboxed command may read, measured with the real CLI in real
 * bubblewrap (README, "The sandbox"): one approved Bash call tries each path
 * and says whether it could read it. Run as root (as CI does), so the Unix
 * permissions let everything through and only the sandbox stands in the way.
 */
const MARKER = 'BUBBLE-SANDBOX-MARKER';

describe("a sandboxed command's reads are an allow-list (real CLI, real bubblewrap)", () => {
  it('reads the workspace, the system folders and the toolchains; nothing of the host, the bot or another workspace', async (ctx) => {
    const planted: string[] = [];
    const plant = (parent: string): string => {
      const dir = mkdtempSync(join(parent, 'bubble-sandbox-probe-'));
      planted.push(dir);
      writeFileSync(join(dir, 'secret.txt'), `${MARKER} in ${parent}\n`);
      return join(dir, 'secret.txt');
    };
    ctx.onTestFinished(() => {
      for (const dir of planted) rmSync(dir, { recursive: true, force: true });
    });
    const hostTmp = plant('/tmp');
    const home = plant('/home');
    const rootHome = plant('/root');
    const varLib = plant('/var/lib');
    const hostWrite = join('/tmp', `bubble-sandbox-write-${Math.random().toString(36).slice(2, 10)}`);
    planted.push(hostWrite);

    const rows: Array<[label: string, command: string, expected: 'read' | 'denied']> = [];
    const probe = () =>
      [
        'r() { if eval "$2" >/dev/null 2>&1; then echo "ROW $1 read"; else echo "ROW $1 denied"; fi; }',
        ...rows.map(([label, command]) => `r '${label}' '${command}'`),
        `echo "GREP=[$(timeout 8 grep -rl ${MARKER} /tmp /home /root /var /srv /opt /etc 2>/dev/null | tr '\\n' ' ')]"`,
      ].join('\n');
    const h = await harnessFor(ctx, null);
    const otherWorkspace = join(h.root, 'other-workspace');
    mkdirSync(otherWorkspace);
    writeFileSync(join(otherWorkspace, 'secret.txt'), `${MARKER} in another workspace\n`);
    mkdirSync(join(h.configDir, 'projects'), { recursive: true });
    writeFileSync(join(h.configDir, 'projects', 'transcript.jsonl'), `${MARKER} in a transcript\n`);
    writeFileSync(join(h.root, 'state.db'), `${MARKER} in the state database\n`);
    writeFileSync(join(h.root, 'bot.env'), `${MARKER} in the env file\n`);
    writeFileSync(join(h.cwd, 'mine.txt'), `${MARKER} in its own workspace\n`);
    rows.push(
      ['own-workspace', `cat ${join(h.cwd, 'mine.txt')}`, 'read'],
      ['other-workspace', `cat ${join(otherWorkspace, 'secret.txt')}`, 'denied'],
      ['cli-transcripts', `cat ${join(h.configDir, 'projects', 'transcript.jsonl')}`, 'denied'],
      ['bot-state-db', `cat ${join(h.root, 'state.db')}`, 'denied'],
      ['bot-env-file', `cat ${join(h.root, 'bot.env')}`, 'denied'],
      ['host-tmp', `cat ${hostTmp}`, 'denied'],
      ['home', `cat ${home}`, 'denied'],
      ['root-home', `cat ${rootHome}`, 'denied'],
      ['var-lib', `cat ${varLib}`, 'denied'],
      ['etc-shadow', 'cat /etc/shadow', 'denied'],
      ['etc-ssh', 'test -n "$(ls -A /etc/ssh)"', 'denied'],
      ['etc-hostname', 'cat /etc/hostname', 'read'],
      ['etc-passwd', 'grep -q ^root: /etc/passwd', 'read'],
      ['usr-bin', 'head -c 4 /usr/bin/env', 'read'],
      ['node-runs', `${process.execPath} -e "require(\\"node:fs\\")"`, 'read'],
      ['git-runs', 'git --version', 'read'],
      ['proc-1-environ', 'cat /proc/1/environ', 'denied'],
      // Written into the sandbox's empty root (a tmpfs that goes with the command), never on the host: checked below.
      ['write-host-tmp', `echo x > ${hostWrite}`, 'read'],
    );
    h.double.setScript([
      {
        match: { text: 'probe' },
        reply: [{ type: 'tool_use', name: 'Bash', input: { command: probe(), description: 'probe the reads' } }],
      },
      { match: { toolResult: true }, reply: [{ type: 'text', text: 'done' }], times: 'always' },
    ]);
    const isolation = {
      kind: 'sandbox' as const,
      // The bot's whole folder (its CLI home, state, env file, every workspace) is private, as claude-scuba sets it.
      privatePaths: [h.root],
      readPaths: toolchainReadPaths(h.env.PATH ?? '', process.execPath),
    };
    const s = h.start({
      canUseTool: async () => ({ behavior: 'allow' }),
      ...isolationOptions(isolation, h.cwd, join(h.root, 'tmp')),
    });
    s.live.push('probe');
    await s.result();
    const output = s
      .of('user')
      .flatMap(blocksOf)
      .filter((b) => b.type === 'tool_result')
      .map((b) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content)))
      .join('\n');
    console.log(`sandbox reads:\n${output}`);
    const measured = Object.fromEntries([...output.matchAll(/^ROW (\S+) (read|denied)$/gm)].map((m) => [m[1], m[2]]));
    expect(measured).toEqual(Object.fromEntries(rows.map(([label, , expected]) => [label, expected])));
    // A search over every folder a secret may sit in finds the marker only in the thread's own workspace.
    expect(output).toContain(`GREP=[${join(h.cwd, 'mine.txt')} ]`);
    expect(existsSync(hostWrite)).toBe(false);
  }, 120_000);
});
