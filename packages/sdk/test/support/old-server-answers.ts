import type { ErrorFrame } from '@bubble/protocol';

/** What a server from before `subscribe_batch` answered one: its unknown frame type answer, with no id. */
export const UNKNOWN_BATCH_ERROR: ErrorFrame = {
  type: 'error',
  error: {
    code: 'invalid_request',
    message:
      'unknown frame type "subscribe_batch"; expected one of client.auth, subscribe, subscribe_grants, unsubscribe, ping',
    details: { type: 'subscribe_batch' },
  },
};
