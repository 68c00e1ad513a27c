import { describe, expect, it } from 'vitest';
import { labelOf, labelParticipants, nameKey, skeleton } from './who-is-who';

const human = (principalId: string, displayName: string) => ({ principalId, displayName, kind: 'human' as const });
const bot = (principalId: string, displayName: string) => ({ principalId, displayName, kind: 'bot' as const });

describe('nameKey', () => {
  it.each([
    ['Alice', 'alice'],
    ['  Alice   Smith ', 'alice smith'],
    ['Ａｌｉｃｅ', 'alice'],
    ['Al\u200bice', 'alice'],
    ['\u202eAlice', 'alice'],
  ])('%j -> %j', (name, key) => expect(nameKey(name)).toBe(key));
});

describe('skeleton', () => {
  it.each([
    ['\u0410lice', 'Alice', true], // Cyrillic capital A
    ['P\u0430ypal', 'Paypal', true], // Cyrillic small a
    ['AIice', 'Alice', true], // capital I for l
    ['rnallory', 'mallory', true],
    ['Alice', 'Alicia', false],
    ['Bob', 'Rob', false],
  ])('%j and %j look alike: %s', (a, b, alike) => expect(skeleton(a) === skeleton(b)).toBe(alike));
});

describe('labelParticipants', () => {
  it('shows names alone while they are unique, and badges bots', () => {
    const labels = labelParticipants([human('alice', 'Alice'), bot('claude', 'Claude')]);
    expect(labelOf(labels, 'alice')).toMatchObject({ text: 'Alice', showId: false, isBot: false });
    expect(labelOf(labels, 'claude')).toMatchObject({ text: 'Claude', showId: false, isBot: true });
  });

  it('shows the id of everyone who shares a name, a bot named like a person included', () => {
    const labels = labelParticipants([
      human('alice', 'Alice'),
      human('alice-2', 'alice '),
      bot('bot-alice', 'ALICE'),
      human('bob', 'Bob'),
    ]);
    expect(labelOf(labels, 'alice').text).toBe('Alice (alice)');
    expect(labelOf(labels, 'alice-2').text).toBe('alice  (alice-2)');
    expect(labelOf(labels, 'bot-alice')).toMatchObject({ text: 'ALICE (bot-alice)', showId: true, isBot: true });
    expect(labelOf(labels, 'bob')).toMatchObject({ text: 'Bob', showId: false });
  });

  it('catches a name that is made to look like it differs only in width or invisible characters', () => {
    const labels = labelParticipants([human('alice', 'Alice'), bot('mimic', 'Ａlice\u200d')]);
    expect(labelOf(labels, 'alice').showId).toBe(true);
    expect(labelOf(labels, 'mimic').showId).toBe(true);
  });

  it('shows the id of everyone whose name looks like another one in another script or with other letters', () => {
    const labels = labelParticipants([
      human('alice', 'Alice'),
      human('mallory', '\u0410lice'),
      bot('mimic', '\u0430lice'),
      human('ian', 'Ian'),
      human('lan', 'lan'),
      human('bob', 'Bob'),
    ]);
    expect(labelOf(labels, 'alice').text).toBe('Alice (alice)');
    expect(labelOf(labels, 'mallory').text).toBe('\u0410lice (mallory)');
    expect(labelOf(labels, 'mimic').showId).toBe(true);
    expect(labelOf(labels, 'ian').text).toBe('Ian (ian)');
    expect(labelOf(labels, 'lan').showId).toBe(false); // its name is its id: the id is what it shows
    expect(labelOf(labels, 'bob').showId).toBe(false);
  });

  it("shows the id of one whose name is another participant's id", () => {
    const labels = labelParticipants([human('bob', 'Robert'), bot('helper', 'bob')]);
    expect(labelOf(labels, 'helper').text).toBe('bob (helper)');
    expect(labelOf(labels, 'bob').text).toBe('Robert');
  });

  it('never repeats an id that is the name itself', () => {
    const labels = labelParticipants([human('alice', 'alice'), bot('bot-a', 'Alice')]);
    expect(labelOf(labels, 'alice')).toMatchObject({ text: 'alice', showId: false });
    expect(labelOf(labels, 'bot-a').text).toBe('Alice (bot-a)');
  });

  it('labels an unknown id by the id, and an empty name by the id', () => {
    const labels = labelParticipants([human('carol', '  ')]);
    expect(labelOf(labels, 'carol').text).toBe('carol');
    expect(labelOf(labels, 'nobody')).toMatchObject({ text: 'nobody', isBot: false });
  });
});
