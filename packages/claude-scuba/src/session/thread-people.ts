import { type EventEnvelope, parseEvent, type Role } from '@bubble/protocol';
import { promptBlocks, type PromptTextBlock } from '@bubble/sdk';
import type { Logger } from 'pino';

/** What the people on a thread need of Bubble. */
export interface PeopleClient {
  listParticipants(threadId: string): Promise<Array<{ principalId: string; role: Role }>>;
  getPrincipal(
    principalId: string,
  ): Promise<{ principalId: string; kind: string; displayName?: string | null | undefined }>;
}

/**
 * Who is on a thread: roles (for approvals), display names (for
 * attribution) and kinds (bots vs humans, for the turn policy), kept current
 * from participant events.
 */
export class ThreadPeople {
  readonly roles = new Map<string, Role>();
  /** Display names by principal id; shared with the drain for attribution. */
  readonly names = new Map<string, string>();
  readonly #kinds = new Map<string, string>();
  readonly #threadId: string;
  readonly #selfId: string;
  readonly #client: PeopleClient;
  readonly #log: Logger;

  constructor(options: { threadId: string; selfId: string; client: PeopleClient; logger: Logger }) {
    this.#threadId = options.threadId;
    this.#selfId = options.selfId;
    this.#client = options.client;
    this.#log = options.logger;
  }

  async load(): Promise<void> {
    const grants = await this.#client.listParticipants(this.#threadId);
    for (const grant of grants) this.roles.set(grant.principalId, grant.role);
    await Promise.all(grants.map((grant) => this.#learn(grant.principalId)));
  }

  /** Follows `participant_added` / `participant_removed`. */
  observe(envelope: EventEnvelope): void {
    if (envelope.type !== 'participant_added' && envelope.type !== 'participant_removed') return;
    const parsed = parseEvent(envelope);
    if (!parsed.ok) return;
    const event = parsed.event;
    if (event.type === 'participant_added') {
      this.roles.set(event.data.principalId, event.data.role);
      void this.#learn(event.data.principalId);
    } else if (event.type === 'participant_removed') {
      this.roles.delete(event.data.principalId);
    }
  }

  isBot(principalId: string): boolean {
    return this.#kinds.get(principalId) === 'bot';
  }

  get selfDisplayName(): string | undefined {
    return this.names.get(this.#selfId);
  }

  /**
   * The words for Claude: one text block per message, each beginning with its
   * speaker's id and display name as the sdk quotes them (`promptBlocks`), also
   * when one person speaks, so no text can pass for another speaker's and none
   * starts a block with `/` (a CLI slash command, engine-notes §10).
   */
  promptContent(parts: ReadonlyArray<{ principalId: string; text: string }>): PromptTextBlock[] {
    return promptBlocks(
      parts.map((part) => ({
        principalId: part.principalId,
        displayName: this.names.get(part.principalId),
        text: part.text,
      })),
    );
  }

  async #learn(principalId: string): Promise<void> {
    if (this.#kinds.has(principalId)) return;
    try {
      const principal = await this.#client.getPrincipal(principalId);
      this.#kinds.set(principalId, principal.kind);
      if (principal.displayName) this.names.set(principalId, principal.displayName);
    } catch (error) {
      this.#log.debug({ err: error, principalId }, 'principal not readable');
    }
  }
}
