import type { InviteInfo, Role } from '@bubble/protocol';
import { inviteLink } from '@bubble/sdk/client';
import { useEffect, useState } from 'preact/hooks';
import type { BubbleClient } from '../api';
import type { PrincipalLabel } from '../model/who-is-who';
import { PrincipalName } from './principal-name';
import { durationText, relativeTime } from '../model/relative-time';

const EXPIRIES: readonly [number, string][] = [
  [3_600, '1 hour'],
  [86_400, '1 day'],
  [604_800, '7 days'],
  [2_592_000, '30 days'],
];
const USES = [1, 5, 25, 100] as const;

/** Whether an invite can still be used (the server decides; this only hides the spent ones). */
export function isOpen(invite: InviteInfo, now: number): boolean {
  return Date.parse(invite.expiresAt) > now && invite.uses < invite.maxUses;
}

/**
 * For a thread's owners: "Copy invite link" makes an invite and copies its web UI link (whoever
 * opens it signs in and joins, with no id to know and no token to pass by hand), and the open
 * invites can be revoked.
 */
export function InvitesSection(props: {
  client: BubbleClient;
  threadId: string;
  labelOf: (principalId: string) => PrincipalLabel;
}) {
  const { client, threadId } = props;
  const [invites, setInvites] = useState<InviteInfo[] | null>(null);
  const [link, setLink] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [role, setRole] = useState<Role>('member');
  const [expires, setExpires] = useState(604_800);
  const [uses, setUses] = useState<number>(1);
  const [busy, setBusy] = useState(false);

  const reload = () =>
    client.listInvites(threadId).then(
      (list) => setInvites(list),
      (err: unknown) => setStatus(`Could not load the invites: ${(err as Error).message}`),
    );
  useEffect(() => {
    void reload();
  }, [client, threadId]);

  const create = async () => {
    setBusy(true);
    try {
      const invite = await client.createInvite(threadId, { role, expiresInSeconds: expires, maxUses: uses });
      const url = inviteLink(window.location.origin, invite.token);
      setLink(url);
      const what =
        `Whoever opens it joins as ${invite.role === 'owner' ? 'an owner' : 'a member'}, ` +
        `${invite.maxUses === 1 ? 'once' : `up to ${invite.maxUses} people`}, for ` +
        `${durationText(Date.parse(invite.expiresAt) - Date.now())}.`;
      try {
        await navigator.clipboard.writeText(url);
        setStatus(`Invite link copied. ${what}`);
      } catch {
        setStatus(`Copy the invite link below. ${what}`);
      }
      void reload();
    } catch (err) {
      setStatus(`Could not make an invite link: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (invite: InviteInfo) => {
    try {
      await client.revokeInvite(threadId, invite.inviteId);
      setStatus('Invite revoked: its link no longer works.');
      setLink(null);
      void reload();
    } catch (err) {
      setStatus(`Could not revoke the invite: ${(err as Error).message}`);
    }
  };

  const now = Date.now();
  const open = (invites ?? []).filter((i) => isOpen(i, now));
  return (
    <section class="invites" aria-labelledby="invites-title">
      <h3 id="invites-title">Invite by link</h3>
      <button type="button" class="primary" disabled={busy} onClick={() => void create()}>
        Copy invite link
      </button>
      <details class="invite-options">
        <summary>Link options</summary>
        <label for="invite-role">Joins as</label>
        <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          <option value="member">member</option>
          <option value="owner">owner</option>
        </select>
        <label for="invite-expires">Works for</label>
        <select id="invite-expires" value={String(expires)} onChange={(e) => setExpires(Number(e.currentTarget.value))}>
          {EXPIRIES.map(([seconds, label]) => (
            <option key={seconds} value={String(seconds)}>
              {label}
            </option>
          ))}
        </select>
        <label for="invite-uses">People who may use it</label>
        <select id="invite-uses" value={String(uses)} onChange={(e) => setUses(Number(e.currentTarget.value))}>
          {USES.map((n) => (
            <option key={n} value={String(n)}>
              {n}
            </option>
          ))}
        </select>
      </details>
      {link && (
        <input
          class="invite-link"
          readOnly
          value={link}
          aria-label="Invite link"
          data-testid="invite-link"
          onFocus={(e) => e.currentTarget.select()}
        />
      )}
      {status && (
        <p role="status" class="meta">
          {status}
        </p>
      )}
      {open.length > 0 && (
        <ul class="open-invites" aria-label="Open invites">
          {open.map((invite) => (
            <li key={invite.inviteId} data-invite-id={invite.inviteId}>
              <span>
                {invite.role} · {invite.uses}/{invite.maxUses} used · ends {relativeTime(invite.expiresAt, now)}
                <span class="meta">
                  {' '}
                  · by <PrincipalName label={props.labelOf(invite.createdBy)} />
                </span>
              </span>
              <button
                type="button"
                class="danger"
                onClick={() => void revoke(invite)}
                aria-label={`Revoke invite ${invite.inviteId}`}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
