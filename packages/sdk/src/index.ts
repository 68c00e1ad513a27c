export { BubbleClient, type BubbleClientOptions, type CallOptions, type CreateThreadInput, type ReadEventsInput, type PutArtifactInput } from './client/bubble-client.js';
export { BubbleApiError, isBubbleApiError, errorFromResponse, type BubbleErrorCode, type BubbleApiErrorInit } from './client/bubble-api-error.js';
export { DEFAULT_RETRY, mayRetry, type RetryMode, type RetryOptions } from './client/http-transport.js';
export { fullJitterDelay, equalJitterDelay, exponentialCeiling, type BackoffOptions } from './client/backoff.js';
export { newClientEventId, withClientEventIds } from './client/client-event-id.js';
export { BubbleLive, deriveWsUrl, type BubbleLiveOptions, type BubbleLiveConfig, type LiveState } from './live/bubble-live.js';
export { ThreadSubscription, GrantsSubscription, type SubscriptionEndReason, type AnyLiveSubscription } from './live/live-subscription.js';
export { diffGrants, sameGrant, type GrantUpdate } from './live/grants-diff.js';
