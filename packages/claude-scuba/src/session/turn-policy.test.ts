import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@bubble/protocol';
import { ThreadLedger } from './thread-ledger.js';
import { decideTurn, mentions, type RespondTo, type TurnDecision, type TurnPart } from './turn-policy.js';

const bots = new Set(['bot-other', 'bot-research']);
const decide = (parts: TurnPart[], respondTo: RespondTo, botOnlyStreak = 0, maxBotOnlyTurns = 3) =>
  decideTurn({
    parts,
    respondTo,
    selfId: 'bot-research',
    selfDisplayName: 'Research Bot',
    isBot: (p) => bots.has(p),
    botOnlyStreak,
    maxBotOnlyTurns,
  });

const alice = (text: string) => ({ principalId: 'alice', text });
const other = (text: string) => ({ principalId: 'bot-other', text });

describe('decideTurn', () => {
  it.each<[string, TurnPart[], RespondTo, number, TurnDecision]>([
    ['all: a human', [alice('hi')], 'all', 0, { answer: true, botOnly: false }],
    ['all: a bot', [other('hi')], 'all', 0, { answer: true, botOnly: true }],
    ['all: nothing but whitespace', [alice('  ')], 'all', 0, { answer: false, reason: 'no_text' }],
    [
      'all: only its own words',
      [{ principalId: 'bot-research', text: 'echo' }],
      'all',
      0,
      { answer: false, reason: 'no_text' },
    ],
    ['humans: a human', [alice('hi')], 'humans', 0, { answer: true, botOnly: false }],
    ['humans: a bot only', [other('hi')], 'humans', 0, { answer: false, reason: 'no_human' }],
    ['humans: a bot and a human', [other('hi'), alice('and me')], 'humans', 0, { answer: true, botOnly: false }],
    ['mentions: by id', [alice('@bot-research what now?')], 'mentions', 0, { answer: true, botOnly: false }],
    ['mentions: by display name', [alice('hey @research bot, look')], 'mentions', 0, { answer: true, botOnly: false }],
    ['mentions: not named', [alice('hello all')], 'mentions', 0, { answer: false, reason: 'not_mentioned' }],
    [
      'mentions: a longer id is someone else',
      [alice('@bot-research2 hi')],
      'mentions',
      0,
      { answer: false, reason: 'not_mentioned' },
    ],
    [
      'mentions: an email is not a mention',
      [alice('mail x@bot-research')],
      'mentions',
      0,
      { answer: false, reason: 'not_mentioned' },
    ],
    ['bot-only turns below the limit', [other('hi')], 'all', 2, { answer: true, botOnly: true }],
    ['bot-only turns at the limit', [other('hi')], 'all', 3, { answer: false, reason: 'bot_only_limit' }],
    ['a human resets the limit', [other('hi'), alice('me too')], 'all', 3, { answer: true, botOnly: false }],
    [
      'mentioned by a bot at the limit',
      [other('@bot-research again')],
      'mentions',
      3,
      { answer: false, reason: 'bot_only_limit' },
    ],
  ])('%s', (_name, parts, respondTo, streak, expected) => {
    expect(decide(parts, respondTo, streak)).toEqual(expected);
  });

  it('a limit of 0 never answers bots alone', () => {
    expect(decide([other('hi')], 'all', 0, 0)).toEqual({ answer: false, reason: 'bot_only_limit' });
  });

  it('two bots stop after maxBotOnlyTurns exchanges, counted by the thread ledger; a person speaking starts again', () => {
    const ledger = new ThreadLedger({ selfId: 'bot-research', isBot: (p) => p.startsWith('bot-') });
    let seq = 0;
    const event = (principalId: string, type: string, data: Record<string, unknown>) =>
      ({
        id: `e${++seq}`,
        threadId: 't',
        seq,
        type,
        principalId,
        data,
        clientEventId: null,
        createdAt: '2026-12-01T00:00:00Z',
      }) as EventEnvelope;
    let answered = 0;
    for (let i = 0; i < 10; i++) {
      const ping = event('bot-other', 'run_started', { runId: `o${i}`, replyTo: i === 0 ? [] : [seq] });
      ledger.observe(ping);
      const decision = decide([other(`ping ${i}`)], 'all', ledger.botOnlyStreak);
      if (!decision.answer) continue;
      answered += 1;
      ledger.observe(event('bot-research', 'run_started', { runId: `r${i}`, replyTo: [ping.seq] }));
    }
    // Our replies and the other bot's answers to them, in a row: 3 between them, then both are refused.
    expect(answered).toBe(2);
    expect(decide([other('ping again')], 'all', ledger.botOnlyStreak)).toEqual({
      answer: false,
      reason: 'bot_only_limit',
    });
    ledger.observe(
      event('alice', 'message_part', { runId: 'a1', chunk: { type: 'text-delta', id: 't', delta: 'carry on' } }),
    );
    expect(ledger.botOnlyStreak).toBe(0);
  });
});

describe('mentions', () => {
  it.each([
    ['@bot-research', true],
    ['(@bot-research)', true],
    ['@BOT-RESEARCH hi', true],
    ['@bot-research.', true],
    ['@bot-research-2', false],
    ['bot-research', false],
  ])('%s -> %s', (text, expected) => {
    expect(mentions(text, 'bot-research')).toBe(expected);
  });
});
