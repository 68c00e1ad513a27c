import { describe, expect, it } from 'vitest';
import { inviteLink, inviteTokenFromLocation } from './invite-link.js';

const T = `bubble_invite_${'a1B2-_'.repeat(7)}`;

describe('inviteLink', () => {
  it.each([
    ['http://127.0.0.1:7777', `http://127.0.0.1:7777/invite#${T}`],
    ['http://127.0.0.1:7777/', `http://127.0.0.1:7777/invite#${T}`],
    ['https://bubble.example.com/ui/?x=1#old', `https://bubble.example.com/ui/invite#${T}`],
  ])('%s', (web, expected) => expect(inviteLink(web, T)).toBe(expected));

  it('round-trips through the location the browser opens', () => {
    const url = new URL(inviteLink('https://bubble.example.com/ui', T));
    expect(inviteTokenFromLocation(url.pathname, url.hash)).toBe(T);
  });
});

describe('inviteTokenFromLocation', () => {
  it.each([
    ['/invite', `#${T}`, T],
    ['/invite/', `#${T}`, T],
    ['/invite', `#${T}%`, null],
    ['/invite', '#bubble_user_AAAAAAAAAAAAAAAAAAAAAAAA', null],
    ['/invite', '', null],
    ['/threads/x', `#${T}`, null],
    ['/invitee', `#${T}`, null],
  ])('%s %s', (path, hash, expected) => expect(inviteTokenFromLocation(path, hash)).toBe(expected));
});
