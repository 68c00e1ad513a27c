import { Component, type ComponentChildren } from 'preact';

/**
 * Draws `fallback` instead of its children when drawing them throws, so one message that the
 * renderer cannot draw (issue 28: 60 KB of `>` once blanked the whole thread for every reader)
 * shows as its raw text and the rest of the thread goes on. New children get a fresh try.
 */
export class ErrorBoundary extends Component<
  { fallback: () => ComponentChildren; children: ComponentChildren; resetKey?: unknown },
  { failed: boolean; resetKey: unknown }
> {
  override state = { failed: false, resetKey: this.props.resetKey };

  static override getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  static override getDerivedStateFromProps(
    props: { resetKey?: unknown },
    state: { failed: boolean; resetKey: unknown },
  ): { failed: boolean; resetKey: unknown } | null {
    return props.resetKey === state.resetKey ? null : { failed: false, resetKey: props.resetKey };
  }

  override componentDidCatch(error: unknown): void {
    console.error('A message could not be drawn; it is shown as text', error);
  }

  render() {
    return this.state.failed ? this.props.fallback() : this.props.children;
  }
}
