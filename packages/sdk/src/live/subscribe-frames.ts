import { LIMITS, type SubscribeBatchFrame, type SubscribeFrame } from '@bubble/protocol';

/**
 * The frames that send `subscribes`, in their order: one `subscribe_batch` per
 * `LIMITS.maxSubscribeBatch` of them, where a lone one stays a plain `subscribe` (what every
 * server knows); or one `subscribe` each where the server does not take batches. A full batch
 * stays under the 1 MiB frame limit: an entry is at most about 750 bytes (a 200-character id, a
 * 512-character thread id).
 */
export function subscribeFrames(
  subscribes: readonly SubscribeFrame[],
  batching: boolean,
): Array<SubscribeFrame | SubscribeBatchFrame> {
  if (!batching) return [...subscribes];
  const frames: Array<SubscribeFrame | SubscribeBatchFrame> = [];
  for (let start = 0; start < subscribes.length; start += LIMITS.maxSubscribeBatch) {
    const chunk = subscribes.slice(start, start + LIMITS.maxSubscribeBatch);
    if (chunk.length === 1) frames.push(chunk[0] as SubscribeFrame);
    else
      frames.push({
        type: 'subscribe_batch',
        subscriptions: chunk.map(({ id, threadId, afterSeq }) => ({ id, threadId, afterSeq })),
      });
  }
  return frames;
}
