import { describe, expect, it } from 'vitest';
import { parseCliArgs, parseDuration, UsageError } from './cli-args.js';

describe('parseCliArgs', () => {
  it.each<[string[], unknown]>([
    [[], { name: 'help' }],
    [['--help'], { name: 'help' }],
    [['threads', '-h'], { name: 'help' }],
    [['whoami'], { name: 'whoami' }],
    [['threads'], { name: 'threads' }],
    [['new'], { name: 'new', title: undefined, invite: [] }],
    [
      ['new', '--title', 'Q3', '--invite', 'bob', '--invite', 'bot-x'],
      { name: 'new', title: 'Q3', invite: ['bob', 'bot-x'] },
    ],
    [['say', 'th_1', 'hello', 'world'], { name: 'say', threadId: 'th_1', text: 'hello world' }],
    [['say', 'th_1', '--', '-1 is a number'], { name: 'say', threadId: 'th_1', text: '-1 is a number' }],
    [['tail', 'th_1'], { name: 'tail', threadId: 'th_1', after: 0, once: false }],
    [['tail', 'th_1', '--after', '42', '--once'], { name: 'tail', threadId: 'th_1', after: 42, once: true }],
    [['approve', 'th_1', 'tc_1'], { name: 'approve', threadId: 'th_1', toolCallId: 'tc_1' }],
    [['deny', 'th_1', 'tc_1', '--reason', 'no'], { name: 'deny', threadId: 'th_1', toolCallId: 'tc_1', reason: 'no' }],
    [['stop', 'th_1', 'run_1'], { name: 'stop', threadId: 'th_1', runId: 'run_1', reason: undefined }],
    [['invite', 'th_1', 'bob'], { name: 'invite', threadId: 'th_1', principalId: 'bob', role: 'member' }],
    [
      ['invite', 'th_1', 'bob', '--role', 'owner'],
      { name: 'invite', threadId: 'th_1', principalId: 'bob', role: 'owner' },
    ],
    [
      ['bots', 'create', 'bot-a', '--name', 'Bot A'],
      { name: 'bots-create', principalId: 'bot-a', displayName: 'Bot A' },
    ],
    [['bots', 'joinable', 'bot-a', 'anyone'], { name: 'bots-joinable', principalId: 'bot-a', joinableBy: 'anyone' }],
    [['bots', 'joinable', 'bot-a', 'owners'], { name: 'bots-joinable', principalId: 'bot-a', joinableBy: 'owners' }],
    [
      ['invite-link', 'th_1'],
      {
        name: 'invite-link',
        threadId: 'th_1',
        role: undefined,
        expiresInSeconds: undefined,
        maxUses: undefined,
        webUrl: undefined,
      },
    ],
    [
      [
        'invite-link',
        'th_1',
        '--role',
        'owner',
        '--expires',
        '2h',
        '--uses',
        '5',
        '--web-url',
        'https://ui.example.com',
      ],
      {
        name: 'invite-link',
        threadId: 'th_1',
        role: 'owner',
        expiresInSeconds: 7_200,
        maxUses: 5,
        webUrl: 'https://ui.example.com',
      },
    ],
    [['invites', 'list', 'th_1'], { name: 'invites-list', threadId: 'th_1' }],
    [['invites', 'revoke', 'th_1', 'inv_1'], { name: 'invites-revoke', threadId: 'th_1', inviteId: 'inv_1' }],
    [['invitations'], { name: 'invitations-list' }],
    [['invitations', 'accept', 'th_1'], { name: 'invitations-accept', threadId: 'th_1' }],
    [['invitations', 'decline', 'th_1.sub-a8f3k-2q9'], { name: 'invitations-decline', threadId: 'th_1.sub-a8f3k-2q9' }],
    [['tokens', 'list'], { name: 'tokens-list' }],
    [['tokens', 'mint'], { name: 'tokens-mint' }],
    [['tokens', 'revoke', 'tok_1'], { name: 'tokens-revoke', tokenId: 'tok_1' }],
  ])('%j', (argv, command) => {
    expect(parseCliArgs(argv).command).toEqual(command);
  });

  it('takes --url, --token and --verbose anywhere', () => {
    expect(parseCliArgs(['threads', '--url', 'http://h:1', '--token', 't', '-v'])).toEqual({
      command: { name: 'threads' },
      url: 'http://h:1',
      token: 't',
      verbose: true,
    });
  });

  it.each<[string[], string]>([
    [['frob'], 'unknown command "frob"'],
    [['threads', 'extra'], 'threads takes no arguments'],
    [['say', 'th_1'], 'say needs <threadId> <text>'],
    [['say', 'th_1', '  '], 'say needs some text'],
    [['tail'], 'tail takes <threadId>'],
    [['tail', 'th_1', '--after=-3'], '--after must be a whole number'],
    [['tail', 'th_1', '--after', 'x'], '--after must be a whole number'],
    [['approve', 'th_1'], 'approve takes <threadId> <toolCallId>'],
    [['invite', 'th_1', 'bob', '--role', 'admin'], '--role must be member or owner'],
    [['bots', 'delete', 'x'], 'unknown subcommand "bots delete"'],
    [['bots', 'joinable', 'bot-a', 'everyone'], 'bots joinable takes owners or anyone, got "everyone"'],
    [['bots', 'joinable', 'bot-a'], 'bots joinable takes <id> <owners|anyone>'],
    [['bots', 'joinable', 'bot-a', 'anyone', '--name', 'x'], 'option --name does not apply to "bots joinable"'],
    [['say', 'th_1', 'hi', '--title', 'x'], 'option --title does not apply to "say"'],
    [['threads', '--bogus'], "Unknown option '--bogus'"],
    [['invite-link'], 'invite-link takes <threadId>'],
    [['invite-link', 'th_1', '--role', 'admin'], '--role must be member or owner'],
    [['invite-link', 'th_1', '--uses', '0'], '--uses must be a whole number >= 1'],
    [['invite-link', 'th_1', '--uses', '2.5'], '--uses must be a whole number >= 1'],
    [['invite-link', 'th_1', '--expires', 'soon'], '--expires takes seconds'],
    [['invite-link', 'th_1', '--web-url', 'not a url'], '--web-url is not a URL'],
    [['invite', 'th_1', 'bob', '--uses', '2'], 'option --uses does not apply to "invite"'],
    [['invites'], 'unknown subcommand "invites"'],
    [['invitations', 'open', 'th_1'], 'unknown subcommand "invitations open"'],
    [['invitations', 'accept'], 'invitations accept takes <threadId>'],
    [['invitations', 'decline', 'th_1', 'extra'], 'invitations decline takes <threadId>'],
    [['invites', 'list'], 'invites list takes <threadId>'],
    [['tokens', 'mint', 'extra'], 'tokens mint takes no arguments'],
    [['tokens', 'revoke'], 'tokens revoke takes <tokenId>'],
    [['tokens', 'delete', 'x'], 'unknown subcommand "tokens delete"'],
  ])('%j is a usage error', (argv, message) => {
    expect(() => parseCliArgs(argv)).toThrow(UsageError);
    expect(() => parseCliArgs(argv)).toThrow(message);
  });
});

describe('parseDuration', () => {
  it.each([
    ['3600', 3_600],
    ['90s', 90],
    ['30m', 1_800],
    ['12h', 43_200],
    ['7d', 604_800],
  ])('%s', (text, seconds) => expect(parseDuration(text)).toBe(seconds));

  it.each(['0', '-1', '1w', '', '1.5h', 'h'])('refuses %j', (text) =>
    expect(() => parseDuration(text)).toThrow(UsageError),
  );
});
