import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/** How close to the bottom (px) still counts as "at the bottom". */
export const AT_BOTTOM_PX = 48;
/** How close to the top (px) asks for the older page. */
export const NEAR_TOP_PX = 400;

export interface Follow {
  /** The scrolling element. */
  readonly scrollRef: { current: HTMLDivElement | null };
  /** The element whose size changes as messages land, stream and lay out. */
  readonly contentRef: { current: HTMLDivElement | null };
  /** Whether the view is held at the bottom. */
  readonly atBottom: boolean;
  readonly onScroll: () => void;
  /** Goes to the newest message and stays there. */
  readonly toBottom: (behavior?: ScrollBehavior) => void;
  /** Stops following and holds the view at `top` (opened at an unread message, not at the bottom). */
  readonly holdAt: (top: number) => void;
  /** Whether the view follows now (read at once, not on the next render). */
  readonly following: () => boolean;
}

/**
 * Keeps a conversation at its newest message while the reader is there. Not only on scroll:
 * a ResizeObserver on the content and on the scroller catches every growth under the reader
 * (an approval card appearing, a message streaming, a code block laying out, the composer
 * growing), and scrolls again before the frame is painted. Scrolled up, the view stays where
 * the reader put it; `atBottom` tells the view to offer a way back.
 */
export function useFollow(options: { onNearTop?: () => void } = {}): Follow {
  const scrollRef = useRef<HTMLDivElement | null>(null);
  const contentRef = useRef<HTMLDivElement | null>(null);
  const stick = useRef(true);
  const lastTop = useRef(0);
  /** Scrolled up: the first message in view, and how far below the top it is. */
  const anchor = useRef<{ el: Element; top: number } | null>(null);
  const [atBottom, setAtBottom] = useState(true);
  const onNearTop = useRef(options.onNearTop);
  onNearTop.current = options.onNearTop;

  const pickAnchor = useCallback(() => {
    const el = scrollRef.current;
    const content = contentRef.current;
    if (el === null || content === null) return;
    anchor.current = firstInView(content, el.getBoundingClientRect().top);
  }, []);

  const toBottom = useCallback((behavior: ScrollBehavior = 'auto') => {
    stick.current = true;
    setAtBottom(true);
    const el = scrollRef.current;
    if (el !== null) el.scrollTo({ top: el.scrollHeight, behavior });
  }, []);

  const holdAt = useCallback(
    (top: number) => {
      stick.current = false;
      setAtBottom(false);
      const el = scrollRef.current;
      if (el === null) return;
      el.scrollTop = top;
      lastTop.current = el.scrollTop;
      pickAnchor();
    },
    [pickAnchor],
  );

  const onScroll = useCallback(() => {
    const el = scrollRef.current;
    if (el === null) return;
    const top = el.scrollTop;
    const near = el.scrollHeight - top - el.clientHeight <= AT_BOTTOM_PX;
    // Only the reader moving up lets go of the bottom. Content that grew between a scroll and its
    // event (an approval card opening) makes the distance large without anyone scrolling.
    if (top < lastTop.current - 1) stick.current = near;
    else if (near) stick.current = true;
    lastTop.current = top;
    setAtBottom(stick.current);
    if (!stick.current) pickAnchor();
    if (top <= NEAR_TOP_PX) onNearTop.current?.();
  }, [pickAnchor]);

  useEffect(() => {
    const el = scrollRef.current;
    const content = contentRef.current;
    if (el === null || content === null || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => {
      if (stick.current) {
        el.scrollTop = el.scrollHeight;
        lastTop.current = el.scrollTop;
        return;
      }
      // Scrolled up: what the reader looks at stays put, whatever grew or shrank above it
      // (an older page put in front, names and badges filled in).
      const held = anchor.current;
      if (held === null || !held.el.isConnected) return;
      const moved = held.el.getBoundingClientRect().top - el.getBoundingClientRect().top - held.top;
      if (Math.abs(moved) >= 1) {
        el.scrollTop += moved;
        lastTop.current = el.scrollTop;
      }
    });
    observer.observe(content);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  return {
    scrollRef,
    contentRef,
    atBottom,
    onScroll,
    toBottom,
    holdAt,
    following: () => stick.current,
  };
}

/** The first child of `content` whose bottom is below `frameTop` (binary search: children are in order). */
function firstInView(content: Element, frameTop: number): { el: Element; top: number } | null {
  const kids = content.children;
  let lo = 0;
  let hi = kids.length - 1;
  let found: Element | null = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const kid = kids[mid]!;
    if (kid.getBoundingClientRect().bottom > frameTop) {
      found = kid;
      hi = mid - 1;
    } else lo = mid + 1;
  }
  return found === null ? null : { el: found, top: found.getBoundingClientRect().top - frameTop };
}
