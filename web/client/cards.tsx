/** One message of the chat as an `article`: the user's, the bot's (sanitised HTML from the server), a card, a file. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Action, Button } from '../../src/contract/actions.js';
import type { CardView, Span, ViewBlock } from '../../src/delivery/views.js';
import { post } from './api.js';

/** A message as the stream sends it. */
export interface Row {
  id: number;
  ref: string;
  thread: string;
  pos: number;
  /** When it was first shown (ms since the epoch). */
  at: number;
  body: Body | null;
}

export type Body =
  | { kind: 'user'; text: string; by: string; files: Array<{ name: string }> }
  | { kind: 'text'; html: string; buttons?: Button[][] }
  /**
   * An approval or question card, a tool line or a notice: the server's neutral view, words and
   * all. `output`: a finished tool call, whose output `/api/tool-output` gives.
   */
  | { kind: 'card'; view: CardView; output?: true }
  | { kind: 'file'; name: string; caption: string | null }
  /** A text file switchboard wrote (an approval's whole arguments); downloaded like a file. */
  | { kind: 'document'; name: string; caption: string | null }
  /** Not a message: the conversation's name, or that it was deleted. */
  | { kind: 'thread'; title: string | null; deleted: boolean };

/** Leading emoji (with variation selectors and joiners) and the space after them. */
const ICON = /^((?:\p{Extended_Pictographic}|\p{Emoji_Presentation})(?:[\u{FE0F}\u{200D}]|\p{Extended_Pictographic})*)\s*/u;

/**
 * A label whose leading emoji is decoration: shown (in an emoji font) but hidden from the
 * accessible name, so a button is named by its words (`Approve`, `Deny`, `This session`, `Always`).
 */
export function Label({ text }: { text: string }) {
  const m = ICON.exec(text);
  if (!m) return <>{text}</>;
  return (
    <>
      <span class="icon" aria-hidden="true">
        {m[1]}
      </span>{' '}
      {text.slice(m[0].length)}
    </>
  );
}

/** When a message was first shown: the time today, the date and time before. */
function Stamp({ at }: { at: number }) {
  if (!Number.isFinite(at) || at <= 0) return null;
  const d = new Date(at);
  const today = new Date().toDateString() === d.toDateString();
  const shown = today
    ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : d.toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  return (
    <time class="at" dateTime={d.toISOString()} title={d.toLocaleString()}>
      {shown}
    </time>
  );
}

/** Copy text to the clipboard (the API needs a secure context; plain http over a network falls back). */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}

/**
 * The bot's answer: the server's sanitised, highlighted HTML, with a bar over each code block
 * naming its language and a `Copy` button (added here: the server's HTML holds no buttons).
 */
function Markdown({ html }: { html: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const root = ref.current;
    if (!root) return;
    for (const pre of root.querySelectorAll('pre')) {
      if (pre.parentElement?.classList.contains('code-block')) continue;
      const box = document.createElement('div');
      box.className = 'code-block';
      const bar = document.createElement('div');
      bar.className = 'code-bar';
      const lang = /language-([\w-]+)/.exec(pre.querySelector('code')?.className ?? '')?.[1];
      const name = document.createElement('span');
      name.textContent = lang ?? 'code';
      const copy = document.createElement('button');
      copy.type = 'button';
      copy.className = 'copy';
      copy.textContent = 'Copy';
      bar.append(name, copy);
      pre.replaceWith(box);
      box.append(bar, pre);
    }
  }, [html]);
  const onClick = async (e: MouseEvent) => {
    const button = (e.target as HTMLElement).closest('button.copy');
    const code = button?.closest('.code-block')?.querySelector('pre');
    if (!button || !code) return;
    const ok = await copyText(code.textContent ?? '');
    button.textContent = ok ? 'Copied' : 'Copy failed';
    setTimeout(() => {
      button.textContent = 'Copy';
    }, 1500);
  };
  // Sanitised on the server (sanitize-html over marked's output); the CSP forbids inline script too.
  return <div class="md" ref={ref} onClick={onClick} dangerouslySetInnerHTML={{ __html: html }} />;
}

/** A finished tool call's output, fetched when the section is first opened. */
function ToolOutput({ messageRef }: { messageRef: string }) {
  const [output, setOutput] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const load = async (e: Event) => {
    if (!(e.currentTarget as HTMLDetailsElement).open || output !== null) return;
    const res = await fetch(`/api/tool-output?ref=${encodeURIComponent(messageRef)}`, { credentials: 'same-origin' });
    const data = (await res.json().catch(() => ({}))) as { output?: string; error?: string };
    if (res.ok && typeof data.output === 'string') setOutput(data.output);
    else setProblem(data.error ?? `could not load the output (HTTP ${res.status})`);
  };
  return (
    <details class="output" onToggle={load}>
      <summary>Output</summary>
      {output !== null ? (
        <pre class="tail">{output || '(no output)'}</pre>
      ) : problem ? (
        <p class="hint">{problem}</p>
      ) : (
        <p class="hint">Loading…</p>
      )}
    </details>
  );
}

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
          <span class="icon" aria-hidden="true">
            {b.icon}
          </span>{' '}
          <Spans spans={b.spans} />
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
              <Label text={btn.label} />
            </button>
          ))}
        </div>
      ))}
    </>
  );
}

/** A card view: an approval or question card, a tool line or a notice. */
function Card({ row, view, tell }: { row: Row; view: CardView; tell: Tell }) {
  // Approvals and questions are boxed cards; tool lines and notices are lines of the chat.
  const boxed = view.card === 'approval' || view.card === 'question';
  const cls = `msg ${view.card}${boxed ? ' card' : ''}${view.tone ? ` ${view.tone}` : ''}`;
  return (
    <article class={cls} aria-label={view.name}>
      {view.blocks.map((b, i) => (
        <ViewBlockEl b={b} key={i} />
      ))}
      <Buttons rows={view.buttons} tell={tell} />
      {row.body?.kind === 'card' && row.body.output ? <ToolOutput messageRef={row.ref} /> : null}
      {boxed ? <Stamp at={row.at} /> : null}
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
          <Stamp at={row.at} />
        </article>
      );
    case 'text':
      return (
        <article class="msg bot" aria-label="switchboard">
          <Markdown html={b.html} />
          {b.buttons ? <Buttons rows={b.buttons} tell={tell} /> : null}
          <Stamp at={row.at} />
        </article>
      );
    case 'card':
      return <Card row={row} view={b.view} tell={tell} />;
    case 'thread':
      return null;
    case 'file':
    case 'document':
      return (
        <article class="msg bot" aria-label="File">
          <a class="file" href={`/api/file?ref=${encodeURIComponent(row.ref)}`} download={b.name}>
            {b.name}
          </a>
          {b.caption ? <p class="caption">{b.caption}</p> : null}
          <Stamp at={row.at} />
        </article>
      );
  }
}
