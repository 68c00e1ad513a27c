#!/usr/bin/env node
// Measures cold start (query() -> first text delta), warm turn (push -> first text delta)
// and resume (new query({ resume }) -> first text delta) with the real CLI against the
// model double. Not a test: run `npm run build && node packages/engine/bench/timing.mjs [runs]`.
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { startModelDouble } from '@bubble/model-double';
import { buildChildEnv, startLiveQuery } from '@bubble/engine';

const runs = Number(process.argv[2] ?? 7);
const double = await startModelDouble({
  script: [{ reply: [{ type: 'text', text: 'Hello from the double, measured.' }], times: 'always' }],
});
const samples = { cold: [], warm: [], resume: [] };

async function firstDelta(session) {
  for (;;) {
    const { value, done } = await session.iterator.next();
    if (done) throw new Error('query ended before a text delta');
    if (value.type === 'stream_event' && value.event?.delta?.type === 'text_delta') return;
  }
}
async function untilResult(session) {
  for (;;) {
    const { value, done } = await session.iterator.next();
    if (done || value.type === 'result') return;
  }
}
function open(options) {
  const live = startLiveQuery({ options });
  return { live, iterator: live.messages[Symbol.asyncIterator]() };
}

for (let i = 0; i < runs; i++) {
  const root = await mkdtemp(join(tmpdir(), 'engine-bench-'));
  const cwd = join(root, 'cwd');
  const configDir = join(root, 'claude');
  await Promise.all([mkdir(cwd), mkdir(configDir)]);
  const env = buildChildEnv({
    path: process.env.PATH,
    configDir,
    credential: { kind: 'api_key', key: 'bench' },
    baseUrl: double.url,
    maxRetries: 0,
  });
  const options = { cwd, env, settingSources: [], includePartialMessages: true, tools: ['Bash'] };

  let t = performance.now();
  const s = open(options);
  s.live.push('turn one');
  await firstDelta(s);
  samples.cold.push(performance.now() - t);
  await untilResult(s);

  t = performance.now();
  s.live.push('turn two');
  await firstDelta(s);
  samples.warm.push(performance.now() - t);
  await untilResult(s);
  const sessionId = s.live.sessionId;
  s.live.end();
  await s.live.ended;

  t = performance.now();
  const r = open({ ...options, resume: sessionId });
  r.live.push('turn three');
  await firstDelta(r);
  samples.resume.push(performance.now() - t);
  await untilResult(r);
  r.live.close();
  await r.live.ended;
  await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
await double.close();

const stat = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${Math.round(s[Math.floor(s.length / 2)])} ms [${Math.round(s[0])}-${Math.round(s.at(-1))}]`;
};
console.log(
  `runs=${runs} load=${loadavg()
    .map((l) => l.toFixed(2))
    .join(',')} node=${process.version}`,
);
console.log(`cold start  (query() -> first text delta):        ${stat(samples.cold)}`);
console.log(`warm turn   (push -> first text delta):            ${stat(samples.warm)}`);
console.log(`resume      (query({ resume }) -> first text delta): ${stat(samples.resume)}`);
