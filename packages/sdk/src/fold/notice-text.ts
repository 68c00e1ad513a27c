import type { AgentSettingsValues, ThreadEventOf } from '@bubble/protocol';
import type { ThreadNotice } from './thread-state.js';

/** The events a bot or the server writes to steer or equip a bot: each is one notice in the timeline. */
export type ControlEvent =
  | ThreadEventOf<'agent_settings'>
  | ThreadEventOf<'context_reset'>
  | ThreadEventOf<'file_added'>;

/** The notice of a control event; the person named is `requestedBy` when a bot recorded their chat command. */
export function controlNotice(event: ControlEvent): ThreadNotice {
  switch (event.type) {
    case 'agent_settings': {
      const { target, requestedBy, model, permissionMode, effort, budgetUsd } = event.data;
      const settings = definedOnly({ model, permissionMode, effort, budgetUsd });
      return { type: 'agent_settings', target, by: requestedBy ?? event.principalId, settings };
    }
    case 'context_reset':
      return { type: 'context_reset', target: event.data.target, by: event.data.requestedBy ?? event.principalId };
    case 'file_added': {
      const { fileId, name, mediaType, size, by } = event.data;
      return { type: 'file_added', fileId, name, mediaType, size, by };
    }
  }
}

/** The fields of `values` that are set, so a notice carries only what was asked. */
function definedOnly<T extends Record<string, unknown>>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** One line for a timeline notice, as every client shows it (`alice asked bot-a for model opus, mode plan`). */
export function noticeText(notice: ThreadNotice): string {
  switch (notice.type) {
    case 'participant_added':
      return `${notice.principalId} joined as ${notice.role}`;
    case 'participant_removed':
      return `${notice.principalId} left`;
    case 'artifact_updated':
      return `${notice.by} wrote ${notice.name} (version ${notice.version})`;
    case 'agent_settings':
      return `${notice.by} asked ${notice.target} for ${settingsText(notice.settings)}`;
    case 'context_reset':
      return `${notice.by} started a fresh conversation with ${notice.target}`;
    case 'file_added':
      return `${notice.by} added ${notice.name} (${byteSize(notice.size)})`;
  }
}

/** `model opus, mode plan, effort high, budget $0.50`, or `no changes` for an empty request. */
export function settingsText(settings: AgentSettingsValues): string {
  const parts: string[] = [];
  if (settings.model !== undefined) parts.push(`model ${settings.model}`);
  if (settings.permissionMode !== undefined) parts.push(`mode ${settings.permissionMode}`);
  if (settings.effort !== undefined) parts.push(`effort ${settings.effort}`);
  if (settings.budgetUsd !== undefined) parts.push(`budget $${settings.budgetUsd.toFixed(2)}`);
  return parts.length > 0 ? parts.join(', ') : 'no changes';
}

/** `512 B`, `3.4 KB`, `25.0 MB`. */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
