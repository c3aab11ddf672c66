/** One message of the chat as an `article`: the user's, the bot's (sanitised HTML from the server), a card, a file. */
import type { Action, Button } from '../../src/contract/actions.js';
import type { CardView, Span, ViewBlock } from '../../src/delivery/views.js';
import { post } from './api.js';

/** A message as the stream sends it. */
export interface Row {
  id: number;
  ref: string;
  thread: string;
  pos: number;
  body: Body | null;
}

export type Body =
  | { kind: 'user'; text: string; by: string; files: Array<{ name: string }> }
  | { kind: 'text'; html: string; buttons?: Button[][] }
  /** An approval or question card, a tool line or a notice: the server's neutral view, words and all. */
  | { kind: 'card'; view: CardView }
  | { kind: 'file'; name: string; caption: string | null }
  /** A text file switchboard wrote (an approval's whole arguments); downloaded like a file. */
  | { kind: 'document'; name: string; caption: string | null };

/**
 * A line of the server's plain text (an error, a refusal) with its `code` spans shown as code, the
 * way the other channels show them; everything else stays text.
 */
export function TextWithCode({ text }: { text: string }) {
  const parts = text.split(/`([^`\n]+)`/);
  return <>{parts.map((p, i) => (i % 2 === 1 ? <code key={i}>{p}</code> : p))}</>;
}

/** Report a refused click (decided elsewhere, not allowed) to the page. */
export type Tell = (text: string) => void;

async function act(tell: Tell, action: Action): Promise<void> {
  const r = await post<{ message?: string; error?: string }>('/api/action', { action });
  if (!r.ok) tell(r.data.message ?? r.data.error ?? `refused (HTTP ${r.status})`);
  else if (action.kind === 'job' || action.kind === 'pairing') tell(r.data.message ?? 'Done.');
}

/** A view's spans: people are named by their principal, as the web chat knows them. */
function Spans({ spans }: { spans: Span[] }) {
  return (
    <>
      {spans.map((s, i) =>
        typeof s === 'string' ? s : 'strong' in s ? <strong key={i}>{s.strong}</strong> : 'code' in s ? <code key={i}>{s.code}</code> : <span key={i} class="who">{s.who}</span>,
      )}
    </>
  );
}

function ViewBlockEl({ b }: { b: ViewBlock }) {
  switch (b.kind) {
    case 'heading':
      return (
        <p class="card-title">
          {b.icon} <Spans spans={b.spans} />
        </p>
      );
    case 'text':
      return (
        <p class="text">
          <Spans spans={b.spans} />
        </p>
      );
    case 'code':
      return <pre class="preview">{b.text}</pre>;
    case 'quote':
      return <blockquote>{b.label ? `${b.label}: ` : ''}{b.text}</blockquote>;
    case 'hint':
      return (
        <p class="hint">
          <Spans spans={b.spans} />
        </p>
      );
  }
}

function Buttons({ rows, tell }: { rows: Button[][]; tell: Tell }) {
  return (
    <>
      {rows.map((line, i) => (
        <div class="buttons" key={i}>
          {line.map((btn) => (
            <button type="button" key={btn.label} class={btn.style === 'primary' ? 'primary' : undefined} onClick={() => act(tell, btn.action)}>
              {btn.label}
            </button>
          ))}
        </div>
      ))}
    </>
  );
}

/** A card view: an approval or question card, a tool line or a notice. */
function Card({ view, tell }: { view: CardView; tell: Tell }) {
  // Approvals and questions are boxed cards; tool lines and notices are lines of the chat.
  const boxed = view.card === 'approval' || view.card === 'question';
  const cls = `msg ${view.card}${boxed ? ' card' : ''}${view.tone ? ` ${view.tone}` : ''}`;
  return (
    <article class={cls} aria-label={view.name}>
      {view.blocks.map((b, i) => (
        <ViewBlockEl b={b} key={i} />
      ))}
      <Buttons rows={view.buttons} tell={tell} />
    </article>
  );
}

/** One row of the chat. */
export function Message({ row, tell }: { row: Row; tell: Tell }) {
  const b = row.body;
  if (!b) return null;
  switch (b.kind) {
    case 'user':
      return (
        <article class="msg user" aria-label="You">
          <p class="text">{b.text}</p>
          {b.files.map((f, i) => (
            <a class="file" key={f.name} href={`/api/file?ref=${encodeURIComponent(row.ref)}&i=${i}`} download={f.name}>
              {f.name}
            </a>
          ))}
        </article>
      );
    case 'text':
      // Sanitised on the server (sanitize-html over marked's output); the CSP forbids inline script too.
      return (
        <article class="msg bot" aria-label="switchboard">
          <div class="md" dangerouslySetInnerHTML={{ __html: b.html }} />
          {b.buttons ? <Buttons rows={b.buttons} tell={tell} /> : null}
        </article>
      );
    case 'card':
      return <Card view={b.view} tell={tell} />;
    case 'file':
    case 'document':
      return (
        <article class="msg bot" aria-label="File">
          <a class="file" href={`/api/file?ref=${encodeURIComponent(row.ref)}`} download={b.name}>
            {b.name}
          </a>
          {b.caption ? <p class="caption">{b.caption}</p> : null}
        </article>
      );
  }
}
