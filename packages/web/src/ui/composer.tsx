import { useState } from 'preact/hooks';
import type { BubbleClient } from '../api';
import { composeRun, enterSends } from '../model/compose-run';

/** Enter sends the whole message as one run in one batch; Shift+Enter breaks the line. */
export function Composer(props: { client: BubbleClient; threadId: string; onError: (message: string) => void }) {
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const send = async () => {
    const body = text.trim();
    if (body === '' || sending) return;
    setSending(true);
    try {
      await props.client.appendEvents(props.threadId, composeRun(`run-web-${crypto.randomUUID()}`, body));
      setText('');
    } catch (err) {
      props.onError(`Your message was not sent: ${(err as Error).message}`);
    } finally {
      setSending(false);
    }
  };
  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <label for="composer-input" class="visually-hidden">
        Message
      </label>
      <textarea
        id="composer-input"
        rows={2}
        value={text}
        placeholder="Write a message (Enter sends, Shift+Enter for a new line)"
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (enterSends(e)) {
            e.preventDefault();
            void send();
          }
        }}
      />
      <button type="submit" disabled={sending || text.trim() === ''}>
        Send
      </button>
    </form>
  );
}
