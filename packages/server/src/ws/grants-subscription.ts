import type { Grant, GrantChange } from '@bubble/protocol';
import { errorFrame, serializeFrame } from './frame-codec.js';
import { GrantView } from './grant-view.js';
import type { SubscriptionHost } from './subscription-host.js';

/**
 * One `subscribe_grants` on one socket: the caller's live grants, then
 * `grants_synced`, then every later change. Changes that race with the
 * snapshot read are held and passed through a `GrantView`, so none is lost
 * and none is sent twice.
 */
export class GrantsSubscription {
  readonly kind = 'grants';
  readonly #view = new GrantView();
  #held: Array<{ change: GrantChange; grant: Grant }> | null = [];
  #isEnded = false;
  readonly #connection: SubscriptionHost;

  constructor(
    connection: SubscriptionHost,
    readonly id: string,
  ) {
    this.#connection = connection;
  }

  get ended(): boolean {
    return this.#isEnded;
  }

  async start(): Promise<void> {
    let grants: Grant[];
    try {
      grants = await this.#connection.context.deps.listLiveGrants(this.#connection.principalId);
    } catch (error) {
      this.#connection.context.deps.logger.error({ err: error, subscriptionId: this.id }, 'grants subscription failed');
      this.end();
      this.#connection.sendControl(errorFrame('internal', 'listing grants failed; subscribe again', this.id));
      return;
    }
    if (this.#isEnded) return;
    for (const grant of grants) {
      this.#view.seed(grant);
      this.#send('added', grant);
    }
    this.#connection.sendControl(serializeFrame({ type: 'grants_synced', id: this.id }));
    const held = this.#held ?? [];
    this.#held = null;
    for (const { change, grant } of held) this.onChange(change, grant);
  }

  /** A change of one of this principal's grants, from the bus. */
  onChange(change: GrantChange, grant: Grant): void {
    if (this.#isEnded) return;
    if (this.#held !== null) {
      this.#held.push({ change, grant });
      return;
    }
    if (this.#view.accept(change, grant)) this.#send(change, grant);
  }

  end(): void {
    if (this.#isEnded) return;
    this.#isEnded = true;
    this.#held = null;
    this.#connection.forgetSubscription(this);
  }

  #send(change: GrantChange, grant: Grant): void {
    this.#connection.sendLive(serializeFrame({ type: 'grant', id: this.id, change, grant }));
  }
}
