/**
 * A conversation that spans instances, as a load balancer would spread it: a person on instance A
 * (raw frames, per protocol.md), a second client on instance B (the sdk's `BubbleClient`, HTTP
 * and its live subscription). Each sees the other's messages live; then the person's connection
 * moves to B, resumes from its last seq, and the conversation goes on.
 */
import { BubbleClient } from '@bubble/sdk';
import type { EventEnvelope } from '@bubble/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedThread, startClusterWorld, subscribe, type ClusterWorld } from './support/cluster-world.js';

let world: ClusterWorld;

beforeAll(async () => {
  world = await startClusterWorld('cluster-conversation', { instances: 2 });
}, 60_000);

afterAll(async () => {
  await world?.close();
});

const say = (text: string, runId: string) => ({
  type: 'message_part',
  data: { runId, chunk: { type: 'text-delta', id: 't', delta: text } },
});
const textOf = (event: EventEnvelope): string | undefined =>
  event.type === 'message_part' ? ((event.data as { chunk: { delta?: string } }).chunk.delta ?? undefined) : undefined;

describe('a conversation moving between instances', () => {
  it('a person on A and a client on B see each other live; the person moves to B and picks up where it was', async () => {
    const [a, b] = world.instances as [(typeof world.instances)[0], (typeof world.instances)[0]];
    const threadId = await sharedThread(a, world.tokens.alice!, ['bob'], world.tokens);

    const bob = new BubbleClient({ url: b.url, token: world.tokens.bob! });
    const bobSees = bob.subscribeThread(threadId)[Symbol.asyncIterator]();
    const nextText = async (): Promise<string> => {
      for (;;) {
        const { value, done } = await bobSees.next();
        if (done) throw new Error('bob\u2019s subscription ended');
        const text = textOf(value);
        if (text !== undefined) return text;
      }
    };

    const aliceOnA = await a.socket(world.tokens.alice!);
    try {
      expect((await subscribe(aliceOnA, 's', threadId)).type).toBe('subscribed');
      const aliceApi = a.as(world.tokens.alice!);
      const aliceHears = async (): Promise<{ seq: number; text: string }> => {
        for (;;) {
          const frame = await aliceOnA.next((f) => f.type === 'event');
          const event = frame.event as EventEnvelope;
          if (event.principalId === 'bob') return { seq: event.seq, text: textOf(event)! };
        }
      };

      expect((await aliceApi.post(`/v1/threads/${threadId}/events`, say('hello from A', 'run-alice'))).status).toBe(
        201,
      );
      expect(await nextText()).toBe('hello from A');
      await bob.appendEvent(threadId, say('hello back from B', 'run-bob'));
      const heard = await aliceHears();
      expect(heard.text).toBe('hello back from B');

      // Alice's connection moves to B (the balancer sent her there): she resumes after the last seq she saw.
      aliceOnA.close();
      const aliceOnB = await b.socket(world.tokens.alice!);
      try {
        expect((await subscribe(aliceOnB, 's2', threadId, heard.seq)).type).toBe('subscribed');
        await bob.appendEvent(threadId, say('are you still there?', 'run-bob'));
        const resumed = await aliceOnB.next((f) => f.type === 'event');
        expect(resumed.event).toMatchObject({ seq: heard.seq + 1, principalId: 'bob' });
        expect(textOf(resumed.event as EventEnvelope)).toBe('are you still there?');
        expect(
          (await b.as(world.tokens.alice!).post(`/v1/threads/${threadId}/events`, say('yes, on B now', 'run-alice')))
            .status,
        ).toBe(201);
        // Bob's stream has everything once, in order, his own messages included.
        expect([await nextText(), await nextText(), await nextText()]).toEqual([
          'hello back from B',
          'are you still there?',
          'yes, on B now',
        ]);
      } finally {
        aliceOnB.close();
      }
    } finally {
      await bobSees.return?.();
      bob.close();
    }
  });
});
