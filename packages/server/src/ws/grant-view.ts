import { assertNever } from '@bubble/protocol';
import type { Grant, GrantChange } from '@bubble/protocol';

interface ViewEntry {
  grantedAt: string;
  role: Grant['role'];
  live: boolean;
}

/**
 * What one `subscribe_grants` client has been told, per thread, so that a
 * change it already knows about is not sent twice. The snapshot read from the
 * store and the live changes that raced with that read overlap; this view
 * decides which of those changes are news.
 *
 * Pure state, no I/O. Grant timestamps are ISO-8601 UTC strings in one
 * format, so they compare as strings.
 */
export class GrantView {
  readonly #byThread = new Map<string, ViewEntry>();

  /** Records a grant sent as part of the snapshot. */
  seed(grant: Grant): void {
    this.#byThread.set(grant.threadId, { grantedAt: grant.grantedAt, role: grant.role, live: true });
  }

  /** Whether this change is news to the client; if so, the view takes it in. */
  accept(change: GrantChange, grant: Grant): boolean {
    const known = this.#byThread.get(grant.threadId);
    switch (change) {
      case 'added': {
        if (
          known?.live &&
          (known.grantedAt > grant.grantedAt || (known.grantedAt === grant.grantedAt && known.role === grant.role))
        ) {
          return false;
        }
        if (known && !known.live && known.grantedAt > grant.grantedAt) return false;
        this.#byThread.set(grant.threadId, { grantedAt: grant.grantedAt, role: grant.role, live: true });
        return true;
      }
      case 'revoked': {
        if (!known?.live || known.grantedAt > grant.grantedAt) return false;
        this.#byThread.set(grant.threadId, { grantedAt: grant.grantedAt, role: grant.role, live: false });
        return true;
      }
      default:
        return assertNever(change, 'grant change');
    }
  }
}
