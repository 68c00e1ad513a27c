import { describe, expect, it } from 'vitest';
import { CredentialsUnavailable } from '@bubble/sdk/client';
import { MAX_TIMER_MS, OidcCredentials, SessionEnded } from './oidc-credentials';
import { sessionFromAnswer, type OidcSession } from './oidc-session';

/** A clock whose timers run when the test moves time forward. */
class FakeClock {
  t = 0;
  #timers: { at: number; fn: () => void; id: number }[] = [];
  #next = 0;
  now = () => this.t;
  setTimer = (fn: () => void, ms: number) => {
    const id = ++this.#next;
    this.#timers.push({ at: this.t + ms, fn, id });
    return id;
  };
  clearTimer = (id: unknown) => {
    this.#timers = this.#timers.filter((timer) => timer.id !== id);
  };
  get pending(): number[] {
    return this.#timers.map((timer) => timer.at);
  }
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      const due = this.#timers.filter((timer) => timer.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((timer) => timer !== due);
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

function setup(
  options: {
    lifetimeS?: number;
    refreshToken?: string | null;
    refresh?: (s: OidcSession, n: number) => Promise<OidcSession>;
  } = {},
) {
  const clock = new FakeClock();
  const lifetime = options.lifetimeS ?? 20;
  const changes: (string | null)[] = [];
  const whys: string[] = [];
  let n = 0;
  const refreshToken = options.refreshToken === undefined ? 'rt0' : options.refreshToken;
  const first = sessionFromAnswer(
    base,
    { access_token: 'at0', expires_in: lifetime, ...(refreshToken ? { refresh_token: refreshToken } : {}) },
    clock.t,
  );
  const credentials = new OidcCredentials(first, {
    refresh: (s) => {
      n += 1;
      return options.refresh
        ? options.refresh(s, n)
        : Promise.resolve(
            sessionFromAnswer(s, { access_token: `at${n}`, expires_in: lifetime, refresh_token: `rt${n}` }, clock.t),
          );
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
      refresh: (s) =>
        new Promise(
          (resolve) =>
            (release = () =>
              resolve(sessionFromAnswer(s, { access_token: 'fresh', expires_in: 20, refresh_token: 'r' }, clock.t))),
        ),
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
    const { clock, credentials, changes, whys } = setup({
      refresh: () => Promise.reject(new SessionEnded('invalid_grant')),
    });
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

  it('keeps the session past expiry while the provider is unreachable, retrying at most a minute apart, and goes on when it is back', async () => {
    let down = true;
    const { clock, credentials, changes, refreshes } = setup({
      lifetimeS: 30,
      refresh: async (s, n) => {
        if (down) throw new TypeError('Failed to fetch');
        return sessionFromAnswer(s, { access_token: `back${n}`, expires_in: 30, refresh_token: 'r' }, clock.t);
      },
    });
    // Due at 22.5 s; failing within 5 s of expiry, and long after it, ends nothing.
    await clock.advance(10 * 60_000);
    expect(changes).toEqual([]);
    expect(credentials.session?.accessToken).toBe('at0');
    expect(credentials.renewalTrouble).toBe('Failed to fetch');
    expect(clock.pending).toHaveLength(1);
    expect(clock.pending[0]! - clock.t).toBeLessThanOrEqual(60_000);
    const tries = refreshes();
    expect(tries).toBeGreaterThanOrEqual(10);
    expect(tries).toBeLessThan(20);
    // The token is past its time: no bearer for now, which is not a sign-out.
    await expect(credentials.current()).rejects.toBeInstanceOf(CredentialsUnavailable);
    down = false;
    await clock.advance(60_000);
    expect(changes).toHaveLength(1);
    expect(await credentials.current()).toMatch(/^back/);
    expect(credentials.renewalTrouble).toBeNull();
  });

  it('answers a refusal during an outage with "not now" (never the refused token), and the new token once renewed', async () => {
    let down = true;
    const { clock, credentials } = setup({
      refresh: async (s) => {
        if (down) throw new TypeError('Failed to fetch');
        return sessionFromAnswer(s, { access_token: 'after', expires_in: 20, refresh_token: 'r' }, clock.t);
      },
    });
    await expect(credentials.renew('at0')).rejects.toBeInstanceOf(CredentialsUnavailable);
    down = false;
    expect(await credentials.renew('at0')).toBe('after');
  });

  it('ends the session on invalid_grant even after failures for a passing reason', async () => {
    let answer: 'down' | 'refused' = 'down';
    const { clock, credentials, changes, whys } = setup({
      refresh: async () => {
        throw answer === 'down' ? new TypeError('Failed to fetch') : new SessionEnded('invalid_grant');
      },
    });
    await clock.advance(30_000);
    expect(changes).toEqual([]);
    answer = 'refused';
    expect(await credentials.renew('at0')).toBeNull();
    expect(changes).toEqual([null]);
    expect(whys[0]).toMatch(/ended at the identity provider/);
    await clock.advance(120_000);
    expect(clock.pending).toEqual([]);
  });

  it('clamps a renewal more than 24.8 days away to what setTimeout keeps, and renews only when it is due', async () => {
    const lifetimeS = 40 * 24 * 3600; // 40 days
    const { clock, credentials, refreshes } = setup({ lifetimeS });
    const due = lifetimeS * 1000 - 60_000;
    expect(clock.pending).toEqual([MAX_TIMER_MS]);
    // The clamped timer fires: not due yet, so it arms the rest instead of refreshing.
    await clock.advance(MAX_TIMER_MS);
    expect(refreshes()).toBe(0);
    expect(clock.pending).toEqual([due]);
    await clock.advance(due - clock.t - 1);
    expect(refreshes()).toBe(0);
    await clock.advance(1);
    expect(refreshes()).toBe(1);
    expect(await credentials.current()).toBe('at1');
  });

  it('never arms a timer longer than 2^31 − 1 ms, whatever the lifetime', async () => {
    const { clock } = setup({ lifetimeS: 10 * 365 * 24 * 3600, refreshToken: null });
    expect(clock.pending.every((at) => at - clock.t <= MAX_TIMER_MS)).toBe(true);
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
