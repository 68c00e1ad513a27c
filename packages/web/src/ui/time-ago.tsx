import { useEffect, useState } from 'preact/hooks';
import { relativeTime } from '../model/relative-time';

/** One timer for every time on the page: each redraws its own text only, not the message around it. */
const listeners = new Set<(now: number) => void>();
let timer: ReturnType<typeof setInterval> | undefined;
const TICK_MS = 30_000;

function useNow(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    listeners.add(setNow);
    timer ??= setInterval(() => {
      const at = Date.now();
      for (const listener of listeners) listener(at);
    }, TICK_MS);
    return () => {
      listeners.delete(setNow);
      if (listeners.size === 0) {
        clearInterval(timer);
        timer = undefined;
      }
    };
  }, []);
  return now;
}

const exact = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const clock = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });

function exactText(iso: string): string {
  const at = Date.parse(iso);
  return Number.isNaN(at) ? iso : exact.format(at);
}

/** "2 minutes ago", with the exact time on hover and in `datetime`. */
export function TimeAgo(props: { iso: string; class?: string }) {
  const now = useNow();
  return (
    <time class={props.class} dateTime={props.iso} title={exactText(props.iso)}>
      {relativeTime(props.iso, now)}
    </time>
  );
}

/** The time of day ("5:24 PM"): beside a message grouped under another's header, shown on hover. */
export function ClockTime(props: { iso: string; class?: string }) {
  const at = Date.parse(props.iso);
  return (
    <time class={props.class} dateTime={props.iso} title={exactText(props.iso)}>
      {Number.isNaN(at) ? '' : clock.format(at)}
    </time>
  );
}
