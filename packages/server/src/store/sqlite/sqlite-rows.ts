import type { EventEnvelope, Grant, Invitation, InviteInfo, Principal, Thread } from '@bubble/protocol';
import type { InvitationState } from '../../domain/invitation-rules.js';
import type { ArtifactMeta, ArtifactRecord, TokenRecord } from '../store.js';

export interface PrincipalRow {
  principal_id: string;
  kind: 'human' | 'bot';
  display_name: string | null;
  joinable_by: 'owners' | 'anyone' | null;
  created_at: string;
  owners: string;
}
export interface ThreadRow {
  thread_id: string;
  parent_thread_id: string | null;
  title: string | null;
  created_by: string;
  created_at: string;
  head_seq: number;
}
export interface GrantRow {
  thread_id: string;
  principal_id: string;
  role: 'owner' | 'member';
  granted_by: string;
  granted_at: string;
  joined_seq: number;
  revoked_at: string | null;
}
export interface EventRow {
  thread_id: string;
  seq: number;
  event_id: string;
  type: string;
  principal_id: string;
  data: string;
  client_event_id: string | null;
  created_at: string;
}
export interface TokenRow {
  token_id: string;
  principal_id: string;
  hash: Buffer;
  created_at: string;
  revoked_at: string | null;
}
export interface InviteRow {
  invite_id: string;
  thread_id: string;
  role: 'owner' | 'member';
  created_by: string;
  created_at: string;
  expires_at: string;
  max_uses: number;
  uses: number;
  revoked_at: string | null;
  /** 1 while the creator holds a live owner grant on the thread. */
  creator_is_owner: number;
  hash?: Buffer;
}
export interface InvitationRow {
  thread_id: string;
  principal_id: string;
  role: 'owner' | 'member';
  invited_by: string;
  created_at: string;
  expires_at: string;
  title: string | null;
  inviter_role: 'owner' | 'member' | null;
  invitee_role: 'owner' | 'member' | null;
}
export interface ArtifactRow {
  name: string;
  version: number;
  media_type: string;
  size: number;
  updated_by: string;
  updated_at: string;
  content?: string;
}

export const PRINCIPAL_COLUMNS = `p.principal_id, p.kind, p.display_name, p.joinable_by, p.created_at,
  (SELECT json_group_array(owner_principal_id) FROM
    (SELECT owner_principal_id FROM principal_owners o WHERE o.principal_id = p.principal_id ORDER BY position)) AS owners`;

export const INVITE_COLUMNS = `i.invite_id, i.thread_id, i.role, i.created_by, i.created_at, i.expires_at, i.max_uses, i.uses, i.revoked_at,
  EXISTS (SELECT 1 FROM grants g WHERE g.thread_id = i.thread_id AND g.principal_id = i.created_by
    AND g.role = 'owner' AND g.revoked_at IS NULL) AS creator_is_owner`;

export const toInvite = (r: InviteRow): InviteInfo => ({
  inviteId: r.invite_id,
  threadId: r.thread_id,
  role: r.role,
  createdBy: r.created_by,
  expiresAt: r.expires_at,
  maxUses: r.max_uses,
  uses: r.uses,
});

export const toInviteState = (r: InviteRow) => ({
  role: r.role,
  expiresAt: r.expires_at,
  maxUses: r.max_uses,
  uses: r.uses,
  revokedAt: r.revoked_at,
  creatorIsOwner: r.creator_is_owner === 1,
});

/** An invitation with its thread's title and the live roles of its inviter and invitee (`v` is `invitations`). */
export const INVITATION_COLUMNS = `v.thread_id, v.principal_id, v.role, v.invited_by, v.created_at, v.expires_at, t.title,
  (SELECT g.role FROM grants g WHERE g.thread_id = v.thread_id AND g.principal_id = v.invited_by
    AND g.revoked_at IS NULL) AS inviter_role,
  (SELECT g.role FROM grants g WHERE g.thread_id = v.thread_id AND g.principal_id = v.principal_id
    AND g.revoked_at IS NULL) AS invitee_role`;

export const toInvitation = (r: InvitationRow): Invitation => ({
  threadId: r.thread_id,
  title: r.title,
  invitedBy: r.invited_by,
  role: r.role,
  createdAt: r.created_at,
});

export const toInvitationState = (r: InvitationRow): InvitationState => ({
  role: r.role,
  invitedBy: r.invited_by,
  expiresAt: r.expires_at,
  inviterRole: r.inviter_role,
  inviteeRole: r.invitee_role,
});

export const toPrincipal = (r: PrincipalRow): Principal => ({
  principalId: r.principal_id,
  kind: r.kind,
  displayName: r.display_name ?? r.principal_id,
  ownerPrincipalIds: JSON.parse(r.owners) as string[],
  ...(r.kind === 'bot' ? { joinableBy: r.joinable_by ?? 'owners' } : {}),
  createdAt: r.created_at,
});

export const toThread = (r: ThreadRow): Thread => ({
  threadId: r.thread_id,
  parentThreadId: r.parent_thread_id,
  title: r.title,
  createdBy: r.created_by,
  createdAt: r.created_at,
  headSeq: r.head_seq,
});

export const toGrant = (r: GrantRow): Grant => ({
  threadId: r.thread_id,
  principalId: r.principal_id,
  role: r.role,
  grantedBy: r.granted_by,
  grantedAt: r.granted_at,
  joinedSeq: r.joined_seq,
  revokedAt: r.revoked_at,
});

export const toEnvelope = (r: EventRow): EventEnvelope => ({
  id: r.event_id,
  threadId: r.thread_id,
  seq: r.seq,
  type: r.type,
  principalId: r.principal_id,
  data: JSON.parse(r.data) as Record<string, unknown>,
  clientEventId: r.client_event_id,
  createdAt: r.created_at,
});

export const toToken = (r: TokenRow): TokenRecord => ({
  tokenId: r.token_id,
  principalId: r.principal_id,
  hash: r.hash,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

export const toArtifactMeta = (r: ArtifactRow): ArtifactMeta => ({
  name: r.name,
  version: r.version,
  mediaType: r.media_type,
  updatedBy: r.updated_by,
  updatedAt: r.updated_at,
  size: r.size,
});

export const toArtifact = (r: ArtifactRow): ArtifactRecord => ({ ...toArtifactMeta(r), content: r.content ?? '' });
