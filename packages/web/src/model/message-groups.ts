import type { TimelineItem } from '@bubble/sdk/client';

/** How far apart two messages of one author may be and still share one header. */
export const GROUP_GAP_MS = 5 * 60_000;

interface GroupedRun {
  readonly principalId: string;
  readonly createdAt: string;
}

/**
 * The runs that continue the message above them: same author, nothing between them in the
 * timeline (a notice such as "bob joined" starts a new group), and at most `gapMs` after it.
 * Those are drawn without their own avatar and name, under the first message's header, the way
 * Slack and Discord group a burst of messages. A run whose time cannot be read starts a group.
 */
export function continuedRuns(
  items: readonly TimelineItem[],
  runOf: (runId: string) => GroupedRun | undefined,
  gapMs = GROUP_GAP_MS,
): ReadonlySet<string> {
  const continued = new Set<string>();
  let previous: GroupedRun | undefined;
  for (const item of items) {
    if (item.kind !== 'run') {
      previous = undefined;
      continue;
    }
    const run = runOf(item.runId);
    if (run === undefined) {
      previous = undefined;
      continue;
    }
    if (previous !== undefined && previous.principalId === run.principalId) {
      const gap = Date.parse(run.createdAt) - Date.parse(previous.createdAt);
      if (gap >= 0 && gap <= gapMs) continued.add(item.runId);
    }
    previous = run;
  }
  return continued;
}
