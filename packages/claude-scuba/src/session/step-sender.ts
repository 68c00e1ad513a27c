import type { Logger } from 'pino';
import type { Outbound } from './outbound.js';
import type { SessionClient } from './session-options.js';
import type { ThreadOutput, ThreadOutputStep } from './thread-output.js';

export interface StepSenderOptions {
  output: ThreadOutput;
  outbound: Outbound;
  client: Pick<SessionClient, 'createSubthread'>;
  logger: Logger;
  /** A sub-agent ended: its subthread's session may end too (once its last events are sent). */
  subthreadEnded?: ((childThreadId: string) => void) | undefined;
}

/** Puts what `ThreadOutput` made of a message onto the threads: appends, and subthreads for sub-agents. */
export class StepSender {
  readonly #options: StepSenderOptions;

  constructor(options: StepSenderOptions) {
    this.#options = options;
  }

  /** Sends a step's events; a sub-agent that ended there lets its subthread go once they are out. */
  send(step: ThreadOutputStep): void {
    const { outbound, subthreadEnded } = this.#options;
    for (const delivery of step.deliveries) outbound.send(delivery.threadId, delivery.events);
    for (const childThreadId of step.ended ?? []) {
      // The child run's end goes out first, then its subthread's session may go.
      void outbound.flush().then(() => subthreadEnded?.(childThreadId));
    }
  }

  /** Sends a step, then creates the subthreads it asks for (awaited, so the parent's chunk names the child). */
  async apply(step: ThreadOutputStep): Promise<void> {
    const { output, client, logger } = this.#options;
    this.send(step);
    for (const request of step.open) {
      let next: ThreadOutputStep;
      try {
        const { thread } = await client.createSubthread(request.parentThreadId, {
          key: request.key,
          ...(request.title ? { title: request.title } : {}),
        });
        logger.info({ toolCallId: request.toolCallId, childThreadId: thread.threadId }, 'sub-agent subthread opened');
        next = output.attached(request.toolCallId, thread.threadId);
      } catch (error) {
        logger.error({ err: error, toolCallId: request.toolCallId }, 'sub-agent subthread could not be created');
        next = output.failedToAttach(request.toolCallId);
      }
      await this.apply(next);
    }
    if (step.dropped > 0) logger.warn({ dropped: step.dropped }, 'sub-agent messages dropped');
  }
}
