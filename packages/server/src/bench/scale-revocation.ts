/**
 * Revocation everywhere: the time from a token's revocation sent to one instance to the close
 * (4003) of a socket authenticated with it on another, on two instances sharing one PostgreSQL.
 * Baseline: the same on one Bubble on SQLite, the socket on the instance that revokes. Each sample
 * mints a token, opens and authenticates a socket with it, then revokes it (`DELETE
 * /v1/auth/tokens/:id`) and times until the socket's close event; the rest of the machine is idle.
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import WebSocket from 'ws';
import { median, quantile, type Figure } from './bench-report.js';
import { httpJson, stopProcess } from './bench-processes.js';
import { startBubble, type Bubble } from './bench-bubble.js';
import { log, serverBin } from './bench-common.js';
import { createBenchDatabase, createPgHumans, startPgBubbles, stopAll } from './scale-cluster.js';

const SAMPLES = 20;
const SECTION = 'Revocation everywhere';

/** An authenticated socket and the promise of its close code. */
async function openSocket(bubble: Bubble, token: string): Promise<{ closed: Promise<number> }> {
  const ws = new WebSocket(`${bubble.url.replace('http', 'ws')}/v1/ws`, { perMessageDeflate: false });
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  ws.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => ws.send(JSON.stringify({ type: 'client.auth', token })));
    ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString('utf8')) as { type: string };
      if (frame.type === 'server.ready') resolve();
    });
    void closed.then((code) => reject(new Error(`socket closed with ${code} before it was ready`)));
  });
  return { closed };
}

/** Milliseconds from the revocation sent through `revokeOn` to the close of the socket on `socketOn`, per sample. */
async function samples(revokeOn: Bubble, socketOn: Bubble): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i += 1) {
    const { token } = await httpJson<{ token: { tokenId: string; token: string } }>(
      'POST',
      `${revokeOn.url}/v1/auth/tokens`,
      revokeOn.token,
    );
    const socket = await openSocket(socketOn, token.token);
    const started = performance.now();
    const revoked = await fetch(`${revokeOn.url}/v1/auth/tokens/${token.tokenId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token.token}` },
    });
    if (revoked.status !== 204) throw new Error(`revoking answered ${revoked.status}: ${await revoked.text()}`);
    const code = await socket.closed;
    times.push(performance.now() - started);
    if (code !== 4003) throw new Error(`the revoked token's socket closed with ${code}, not 4003`);
  }
  return times;
}

export async function scaleRevocationFigures(adminUrl: string, root: string, notes: string[]): Promise<Figure[]> {
  const db = await createBenchDatabase(adminUrl, 'revocation');
  const cluster: Bubble[] = [];
  let sqlite: Bubble | undefined;
  let cross: number[];
  let base: number[];
  try {
    cluster.push(...(await startPgBubbles(serverBin, db.url, await createPgHumans(db.url), 2)));
    sqlite = await startBubble(serverBin, await mkdtemp(join(root, 'scale-revocation-sqlite-')), 'on');
    cross = await samples(cluster[0]!, cluster[1]!);
    base = await samples(sqlite, sqlite);
  } finally {
    await stopAll(cluster);
    if (sqlite) await stopProcess(sqlite.child);
    await db.drop();
  }
  const sorted = (values: number[]) => Float64Array.from(values).sort();
  const ms = (values: number[]) => values.map((v) => v.toFixed(1)).join(', ');
  log(`revocation: cross-instance ${ms(cross)} ms; SQLite same instance ${ms(base)} ms`);
  notes.push(
    `Revocation: ${SAMPLES} samples each; a token minted, a socket authenticated with it on the other instance, then the token revoked through the first; ` +
      'time from the DELETE sent to the close event (4003) on the other socket. With notifications the other instance hears of it at once; ' +
      'without one, its outbox poll (every 250 ms) bounds the delay.',
  );
  return [
    {
      section: SECTION,
      name: `token revoked on one instance to its socket closed on the other, median of ${SAMPLES} (baseline: SQLite, same instance)`,
      unit: 'ms',
      bubble: median(cross),
      baseline: median(base),
      better: 'lower',
      note: `samples ${ms(cross)} ms; SQLite ${ms(base)} ms`,
    },
    {
      section: SECTION,
      name: `the same, slowest of ${SAMPLES}`,
      unit: 'ms',
      bubble: quantile(sorted(cross), 1),
      baseline: quantile(sorted(base), 1),
      better: 'lower',
      target: '<= 1,000 ms',
      meetsTarget: quantile(sorted(cross), 1) <= 1_000,
    },
  ];
}
