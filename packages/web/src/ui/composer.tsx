import { useState } from 'preact/hooks';
import { type BubbleClient, describeError } from '../api';
import { composeRun, enterSends } from '../model/compose-run';

/** Who is on the thread besides the writer, as the composer says it: bots with whether they are online. */
export interface Audience {
  readonly people: readonly string[];
  /** `online` is undefined while the server has said nothing about presence. */
  readonly bots: ReadonlyArray<{ readonly id: string; readonly name: string; readonly online: boolean | undefined }>;
}

/**
 * Enter sends the whole message as one run in one batch; Shift+Enter breaks the line. A message
 * that was not sent stays in the box with a line saying why, until a send succeeds. Above it:
 * who will see the message, and any bot that is offline (so a stopped bot is not taken for a
 * silent one).
 */
export function Composer(props: {
  client: BubbleClient;
  threadId: string;
  audience: Audience;
  /** Called as a message is sent (before the server answers), with its run id. */
  onSending?: (runId: string) => void;
}) {
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const send = async () => {
    const body = text.trim();
    if (body === '' || sending) return;
    setSending(true);
    const runId = `run-web-${crypto.randomUUID()}`;
    props.onSending?.(runId);
    try {
      await props.client.appendEvents(props.threadId, composeRun(runId, body));
      setText('');
      setFailure(null);
    } catch (err) {
      setFailure(
        describeError(err, 'Your message was not sent', { next: 'Your text is still here: press Send to try again.' }),
      );
    } finally {
      setSending(false);
    }
  };
  const { people, bots } = props.audience;
  const offline = bots.filter((bot) => bot.online === false);
  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <div class="composer-context">
        {offline.length > 0 && (
          <p class="bot-offline" role="status" data-testid="bot-offline">
            {names(offline.map((b) => b.name))} {offline.length === 1 ? 'is' : 'are'} offline:{' '}
            {offline.length === 1 ? 'it' : 'they'} will not answer until {offline.length === 1 ? 'it is' : 'they are'}{' '}
            back.
          </p>
        )}
        <p class="meta audience" data-testid="audience">
          {people.length === 0 ? 'Seen by you only' : `Seen by you and ${names(people)}`}
          {bots.length > 0 && ` · ${bots.length === 1 ? 'Bot' : 'Bots'} here: ${names(bots.map((b) => b.name))}`}
        </p>
      </div>
      {failure && (
        <p class="error send-failure" role="alert">
          {failure}
        </p>
      )}
      <div class="composer-row">
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
      </div>
    </form>
  );
}

function names(list: readonly string[]): string {
  if (list.length <= 1) return list.join('');
  if (list.length > 4) return `${list.slice(0, 3).join(', ')} and ${list.length - 3} more`;
  return `${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`;
}
