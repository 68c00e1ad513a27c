import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/model-double.js', import.meta.url));
let dir = '';
let child: ChildProcess | undefined;
afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]): {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
} {
  const c = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child = c;
  let out = '';
  let err = '';
  c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  c.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => c.on('exit', (code) => resolve(code)));
  return { child: c, stdout: () => out, stderr: () => err, exit };
}

async function listeningUrl(c: ChildProcess): Promise<string> {
  let out = '';
  return new Promise((resolve, reject) => {
    c.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /model double listening on (http:\/\/\S+)\n/.exec(out);
      if (m) resolve(m[1]!);
    });
    c.on('exit', (code) => reject(new Error(`exited ${code} before listening`)));
  });
}

describe('model-double CLI', () => {
  it('serves the script file, prints its URL, and exits cleanly on SIGTERM', async () => {
    dir = mkdtempSync(join(tmpdir(), 'model-double-cli-'));
    const file = join(dir, 'script.json');
    writeFileSync(file, JSON.stringify([{ match: { text: 'ping' }, reply: [{ type: 'text', text: 'pong' }] }]));
    const p = run(['--port', '0', '--host', '127.0.0.1', '--script', file]);
    const url = await listeningUrl(p.child);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'ping' }] }),
    });
    expect(await res.json()).toMatchObject({ content: [{ type: 'text', text: 'pong' }] });
    const recorded = (await (await fetch(`${url}/_double/requests`)).json()) as { requests: Array<{ rule: unknown }> };
    expect(recorded.requests.map((r) => r.rule)).toEqual([{ index: 0, name: null }]);
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
  });

  it('exits cleanly on SIGINT sent the moment it reports ready', async () => {
    const p = run(['--port', '0']);
    await listeningUrl(p.child);
    p.child.kill('SIGINT');
    expect(await p.exit).toBe(0);
  });

  it('serves the built-in demo script with --demo, and refuses it beside --script', async () => {
    const p = run(['--port', '0', '--demo']);
    const url = await listeningUrl(p.child);
    const ask = async (text: string) => {
      const res = await fetch(`${url}/v1/messages`, {
        method: 'POST',
        body: JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: text }] }),
      });
      return (await res.json()) as { content: Array<{ type: string; name?: string; text?: string }> };
    };
    expect((await ask('run a command')).content.map((b) => b.name ?? b.type)).toEqual(['text', 'Bash']);
    expect((await ask('hello')).content[0]!.text).toContain('Things to try here, offline');
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
    const both = run(['--port', '0', '--demo', '--script', 'x.json']);
    expect(await both.exit).toBe(2);
    expect(both.stderr()).toContain('--demo and --script are one or the other');
  });

  it('refuses an invalid script and lists every problem', async () => {
    dir = mkdtempSync(join(tmpdir(), 'model-double-cli-'));
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify([{ reply: [{ type: 'text' }] }, { error: { status: 418 } }]));
    const p = run(['--port', '0', '--script', file]);
    expect(await p.exit).toBe(2);
    expect(p.stderr()).toContain('rule 0.reply[0].text');
    expect(p.stderr()).toContain('rule 1.error.status');
    expect(p.stdout()).not.toContain('listening');
  });

  it('refuses a bad port and unknown flags', async () => {
    const bad = run(['--port', 'eighty']);
    expect(await bad.exit).toBe(2);
    expect(bad.stderr()).toContain('--port must be an integer');
    const max = run(['--max-recorded', 'lots']);
    expect(await max.exit).toBe(2);
    expect(max.stderr()).toContain('--max-recorded must be a whole number');
    const unknown = run(['--bogus']);
    expect(await unknown.exit).toBe(2);
    expect(unknown.stderr()).toContain('usage: model-double');
  });
});
