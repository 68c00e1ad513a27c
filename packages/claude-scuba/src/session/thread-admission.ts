import type { JoinableBy, Role, Thread } from '@bubble/protocol';
import type { Logger } from 'pino';

export interface ThreadAdmissionOptions {
  threadId: string;
  botOwners: ReadonlySet<string>;
  /** Read each time: an owner may change it while the bot runs. */
  joinableBy: () => JoinableBy;
  /** Live roles on the thread (kept current by the session). */
  roles: ReadonlyMap<string, Role>;
  client: {
    getThread(threadId: string): Promise<Pick<Thread, 'threadId' | 'parentThreadId'>>;
    listParticipants(threadId: string): Promise<Array<{ principalId: string }>>;
  };
  logger: Logger;
}

/** As deep as the server lets subthreads nest, and then some. */
const MAX_ANCESTORS = 16;

/**
 * Defence in depth (the server enforces `joinableBy` too): a bot that only its
 * owners may add works where one of them is a participant, here or on an
 * ancestor (a subthread counts through its parents, so the bot's own
 * sub-agent subthreads work). A grant on any other thread, an old server's or
 * a direct database write, is not acted on.
 */
export class ThreadAdmission {
  readonly #options: ThreadAdmissionOptions;
  #ownerAbove = false;

  constructor(options: ThreadAdmissionOptions) {
    this.#options = options;
  }

  /** Looks up the ancestors once, when no owner is on the thread itself. */
  async init(): Promise<void> {
    if (!this.#ownerHere()) this.#ownerAbove = await this.#ownerOnAncestor();
  }

  get admitted(): boolean {
    return this.#options.joinableBy() === 'anyone' || this.#ownerAbove || this.#ownerHere();
  }

  #ownerHere(): boolean {
    for (const principalId of this.#options.roles.keys()) if (this.#options.botOwners.has(principalId)) return true;
    return false;
  }

  async #ownerOnAncestor(): Promise<boolean> {
    const { client, botOwners, logger } = this.#options;
    let threadId = this.#options.threadId;
    for (let depth = 0; depth < MAX_ANCESTORS; depth++) {
      let parent: string | null;
      try {
        parent = (await client.getThread(threadId)).parentThreadId;
        if (parent === null) return false;
        const grants = await client.listParticipants(parent);
        if (grants.some((g) => botOwners.has(g.principalId))) return true;
      } catch (error) {
        logger.warn({ err: error, threadId }, 'could not read an ancestor thread; counting no owner there');
        return false;
      }
      threadId = parent;
    }
    return false;
  }
}
