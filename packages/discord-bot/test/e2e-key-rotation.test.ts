/** Issue 28 §11: the sealing key can be rotated (previousSecretsKeys); a token no key opens is a clear error per user. */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SecretBox } from '../src/secrets/secret-box.js';
import {
  ALICE,
  ALICE_TOKEN,
  BOB,
  BOB_TOKEN,
  CHANNEL_ID,
  requestToken,
  startHarness,
  type Harness,
} from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Row {
  user_id: string;
  kind: string;
  sealed: string;
  key_id: string;
}
function rows(harness: Harness): Row[] {
  const db = new Database(harness.config.store.path, { readonly: true });
  try {
    return db.prepare('SELECT user_id, kind, sealed, key_id FROM linked_tokens ORDER BY user_id, kind').all() as Row[];
  } finally {
    db.close();
  }
}

/** Alice mentions the bot; the bot's answer to that message (a thread's reply, or a refusal where she wrote). */
async function mentionAndSettle(harness: Harness, text: string): Promise<{ ok: boolean; refusal?: string }> {
  const message = harness.discord.postMessage({
    channelId: CHANNEL_ID,
    author: ALICE,
    content: `<@${harness.discord.bot.id}> ${text}`,
    mentions: [harness.discord.bot],
  });
  const outcome = await harness.discord.waitFor(
    () =>
      harness.discord.reactions(message.id).includes('✅')
        ? { ok: true }
        : harness.botMessages(CHANNEL_ID).find((m) => m.messageReference?.messageId === message.id),
    { label: `the answer to "${text}"`, timeoutMs: 60_000 },
  );
  return 'ok' in outcome ? { ok: true } : { ok: false, refusal: outcome.content };
}

describe('sealing key rotation', () => {
  it('B with previous [A] opens and re-seals A-sealed tokens; then B alone works; a wrong key is an error per user', async () => {
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: 'ok' }], times: 'always' }] });
    const keyA = h.env.BUBBLE_DISCORD_SECRETS_KEY!;
    const keyB = randomBytes(32).toString('hex');
    const [boxA, boxB] = [SecretBox.fromKey(keyA), SecretBox.fromKey(keyB)];
    await h.link(ALICE, ALICE_TOKEN);
    await h.link(ALICE, 'github_pat_alice_0123456789', 'github');
    await h.link(BOB, BOB_TOKEN);
    const sealedWithA = rows(h);
    expect(sealedWithA.map((r) => r.key_id)).toEqual([boxA.keyId, boxA.keyId, boxA.keyId]);

    // Rotate: B is the key, A is only to open what it sealed.
    await h.restart({
      env: { BUBBLE_DISCORD_SECRETS_KEY: keyB, BUBBLE_DISCORD_OLD_KEY: keyA },
      config: (file) => (file.previousSecretsKeys = [{ env: 'BUBBLE_DISCORD_OLD_KEY' }]),
    });
    const sealedWithB = rows(h);
    expect(sealedWithB.map((r) => [r.user_id, r.kind, r.key_id])).toEqual([
      [ALICE.id, 'claude', boxB.keyId],
      [ALICE.id, 'github', boxB.keyId],
      [BOB.id, 'claude', boxB.keyId],
    ]);
    for (const [i, row] of sealedWithB.entries()) {
      expect(row.sealed).not.toBe(sealedWithA[i]!.sealed);
      expect(() => boxA.open(row.sealed, `${row.kind}:${row.user_id}`)).toThrow(/another secretsKey/);
    }
    expect(boxB.open(sealedWithB[0]!.sealed, `claude:${ALICE.id}`)).toBe(ALICE_TOKEN);
    expect(h.logLines.some((l) => String(l.msg).includes('3 linked token(s) sealed with a previous key'))).toBe(true);
    expect(await mentionAndSettle(h, 'after the rotation')).toEqual({ ok: true });
    expect(requestToken(h.mainRequests().at(-1)!)).toBe(ALICE_TOKEN);

    // A is retired: B alone opens everything.
    await h.restart({ config: (file) => delete file.previousSecretsKeys });
    expect(await mentionAndSettle(h, 'with B alone')).toEqual({ ok: true });
    expect(requestToken(h.mainRequests().at(-1)!)).toBe(ALICE_TOKEN);
    const requestsBefore = h.mainRequests().length;

    // Only a wrong key: the bot starts, names each user whose token is lost, and tells Alice to link again.
    const lines = h.logLines.length;
    await h.restart({ env: { BUBBLE_DISCORD_SECRETS_KEY: randomBytes(32).toString('hex') } });
    const errors = h.logLines.slice(lines).filter((l) => l.level === 50);
    expect(errors.map((l) => [l.userId, l.kind])).toEqual([
      [ALICE.id, 'claude'],
      [ALICE.id, 'github'],
      [BOB.id, 'claude'],
    ]);
    expect(String(errors[0]!.msg)).toContain(`user ${ALICE.id} opens with neither secretsKey nor previousSecretsKeys`);
    const refused = await mentionAndSettle(h, 'with a wrong key');
    expect(refused.ok).toBe(false);
    expect(refused.refusal).toContain("can no longer be opened (this bot's key changed)");
    expect(refused.refusal).toContain('/link');
    expect(h.mainRequests()).toHaveLength(requestsBefore);
    // Nothing was re-sealed or lost: the rows are B's as before.
    expect(rows(h)).toEqual(sealedWithB);
    // Linking again works under the new key.
    expect(await h.link(ALICE, ALICE_TOKEN)).toContain('Linked');
    expect(await mentionAndSettle(h, 'linked again')).toEqual({ ok: true });
  }, 120_000);

  it('a previousSecretsKeys entry that is not set is a config problem naming it', async () => {
    h = await startHarness();
    await expect(
      h.restart({ config: (file) => (file.previousSecretsKeys = [{ env: 'BUBBLE_DISCORD_NOT_SET' }]) }),
    ).rejects.toThrow('previousSecretsKeys[0]: the environment variable BUBBLE_DISCORD_NOT_SET is not set');
  });
});
