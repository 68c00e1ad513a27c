import { describe, expect, it } from 'vitest';
import { OidcCredentials, SessionEnded } from './oidc-credentials';
import { sessionFromAnswer, type OidcSession } from './oidc-session';

/** A clock whose timers run when the test moves time forward. */
class FakeClock {
  t = 0;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private next = 0;
  now = () => this.t;
  setTimer = (fn: () => void, ms: number) => {
    const id = ++this.next;
    this.timers.push({ at: this.t + ms, fn, id });
    return id;
  };
  clearTimer = (id: unknown) => {
    this.timers = this.timers.filter((timer) => timer.id !== id);
  };
  get pending(): number[] {
    return this.timers.map((timer) => timer.at);
  }
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((timer) => timer.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.t = due.at;
      due.fn();
      await flush();
    }
    this.t = end;
    await flush();
  }
}

const flush = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
const base = { issuer: 'https://idp.example/', clientId: 'spa' };

function setup(options: { lifetimeS?: number; refreshToken?: string | null; refresh?: (s: OidcSession, n: number) => Promise<OidcSession> } = {}) {
  const clock = new FakeClock();
  const lifetime = options.lifetimeS ?? 20;
  const changes: (string | null)[] = [];
  const whys: string[] = [];
  let n = 0;
  const refreshToken = options.refreshToken === undefined ? 'rt0' : options.refreshToken;
  const first = sessionFromAnswer(base, { access_token: 'at0', expires_in: lifetime, ...(refreshToken ? { refresh_token: refreshToken } : {}) }, clock.t);
  const credentials = new OidcCredentials(first, {
    refresh: (s) => {
      n += 1;
      return options.refresh ? options.refresh(s, n) : Promise.resolve(sessionFromAnswer(s, { access_token: `at${n}`, expires_in: lifetime, refresh_token: `rt${n}` }, clock.t));
    },
    onChange: (s, why) => {
      changes.push(s?.accessToken ?? null);
      if (why) whys.push(why);
    },
    now: clock.now,
    setTimer: clock.setTimer,
    clearTimer: clock.clearTimer,
  });
  return { clock, credentials, changes, whys, refreshes: () => n };
}

describe('OidcCredentials', () => {
  it('renews before expiry, again and again, with the rotated refresh token', async () => {
    const seen: string[] = [];
    const { clock, credentials, changes } = setup({
      refresh: async (s, n) => {
        seen.push(s.refreshToken!);
        return sessionFromAnswer(s, { access_token: `at${n}`, expires_in: 20, refresh_token: `rt${n}` }, clock.t);
      },
    });
    expect(await credentials.current()).toBe('at0');
    expect(clock.pending).toEqual([15_000]);
    await clock.advance(15_000);
    expect(await credentials.current()).toBe('at1');
    await clock.advance(15_000);
    expect(await credentials.current()).toBe('at2');
    expect(seen).toEqual(['rt0', 'rt1']);
    expect(changes).toEqual(['at1', 'at2']);
  });

  it('answers a refusal of an old token with the newer one, without asking the provider', async () => {
    const { clock, credentials, refreshes } = setup();
    await clock.advance(15_000);
    expect(refreshes()).toBe(1);
    // The socket signed in with at0 is closed 4001 when at0 expires: the answer is at1, at once.
    expect(await credentials.renew('at0')).toBe('at1');
    expect(refreshes()).toBe(1);
  });

  it('renews at once when the current token is refused, once for many callers', async () => {
    let release: (() => void) | undefined;
    const { clock, credentials, refreshes } = setup({
      refresh: (s) => new Promise((resolve) => (release = () => resolve(sessionFromAnswer(s, { access_token: 'fresh', expires_in: 20, refresh_token: 'r' }, clock.t)))),
    });
    const a = credentials.renew('at0');
    const b = credentials.renew('at0');
    await flush();
    release!();
    expect(await a).toBe('fresh');
    expect(await b).toBe('fresh');
    expect(refreshes()).toBe(1);
  });

  it('renews a token that expired while nothing ran (a sleeping laptop) before handing it out', async () => {
    const { clock, credentials } = setup();
    clock.clearTimer(1);
    clock.t = 60_000;
    expect(await credentials.current()).toBe('at1');
  });

  it('ends the session when the provider refuses the refresh token', async () => {
    const { clock, credentials, changes, whys } = setup({ refresh: () => Promise.reject(new SessionEnded('invalid_grant')) });
    await clock.advance(15_000);
    expect(changes).toEqual([null]);
    expect(whys[0]).toMatch(/ended at the identity provider/);
    expect(credentials.session).toBeNull();
    await expect(credentials.current()).rejects.toBeInstanceOf(SessionEnded);
    expect(await credentials.renew('at0')).toBeNull();
  });

  it('tries again while the token lasts when the provider is unreachable, then goes on', async () => {
    const { clock, credentials, changes } = setup({
      lifetimeS: 120,
      refresh: async (s, n) => {
        if (n < 3) throw new TypeError('Failed to fetch');
        return sessionFromAnswer(s, { access_token: 'at-late', expires_in: 120, refresh_token: 'r' }, clock.t);
      },
    });
    await clock.advance(90_000); // renewal due at 120 − 30 s; fails
    expect(await credentials.current()).toBe('at0');
    await clock.advance(2_000); // first retry; fails
    await clock.advance(5_000); // second retry; works
    expect(await credentials.current()).toBe('at-late');
    expect(changes).toEqual(['at-late']);
  });

  it('ends the session when it expires unrenewed', async () => {
    const { clock, changes, whys } = setup({ lifetimeS: 30, refresh: () => Promise.reject(new TypeError('Failed to fetch')) });
    await clock.advance(40_000);
    expect(changes).toEqual([null]);
    expect(whys[0]).toMatch(/expired and could not be renewed/);
  });

  it('without a refresh token, ends at expiry and does not ask the provider', async () => {
    const { clock, credentials, changes, refreshes } = setup({ refreshToken: null, lifetimeS: 30 });
    expect(await credentials.renew('someone-else')).toBe('at0');
    await clock.advance(30_000);
    expect(changes).toEqual([null]);
    expect(refreshes()).toBe(0);
  });

  it('stops on dispose (sign out)', async () => {
    const { clock, credentials, refreshes } = setup();
    credentials.dispose();
    expect(clock.pending).toEqual([]);
    await clock.advance(60_000);
    expect(refreshes()).toBe(0);
    await expect(credentials.current()).rejects.toThrow('signed out');
  });
});
