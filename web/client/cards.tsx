/** One message of the chat as an `article`: the user's, the bot's (sanitised HTML from the server), a card, a file. */
import { post } from './api.js';

/** A message as the stream sends it. */
export interface Row {
  id: number;
  ref: string;
  thread: string;
  pos: number;
  body: Body | null;
}

type Approval = {
  kind: 'approval';
  id: string;
  label: string;
  preview: string;
  requester: string;
  alwaysCovers?: string;
  state: 'pending' | 'approved' | 'denied' | 'awaiting_note' | 'expired' | 'cancelled';
  scope: 'once' | 'session' | 'always' | null;
  by: string | null;
  note: string | null;
};
type Question = { kind: 'question'; id: string; question: string; answers: string[]; state: string; answer: string | null; by: string | null };

export type Body =
  | { kind: 'user'; text: string; by: string; files: Array<{ name: string }> }
  | { kind: 'text'; html: string; buttons?: Array<Array<{ label: string; action: Action }>> }
  | { kind: 'notice'; level: 'error' | 'info'; text: string }
  | Approval
  | Question
  | { kind: 'tool'; label: string; state: string; summary: string; tail?: string }
  | { kind: 'file'; name: string; caption: string | null };

/** Report a refused click (decided elsewhere, not allowed) to the page. */
export type Tell = (text: string) => void;

/** A button's action, as the server's action router takes it. */
export type Action =
  | { kind: 'approval'; id: string; choice: 'once' | 'session' | 'always' | 'deny' | 'no_note' }
  | { kind: 'question'; id: string; index: number }
  | { kind: 'job'; id: string; op: string }
  | { kind: 'pairing'; code: string };

async function act(tell: Tell, action: Action): Promise<void> {
  const r = await post<{ message?: string; error?: string }>('/api/action', { action });
  if (!r.ok) tell(r.data.message ?? r.data.error ?? `refused (HTTP ${r.status})`);
  else if (action.kind === 'job' || action.kind === 'pairing') tell(r.data.message ?? 'Done.');
}

const SCOPE: Record<string, string> = { once: 'once', session: 'for this session', always: 'always' };

function ApprovalCard({ a, tell }: { a: Approval; tell: Tell }) {
  let outcome = '';
  if (a.state === 'approved') outcome = `✔ Approved ${SCOPE[a.scope ?? 'once']} by ${a.by ?? 'someone'}`;
  else if (a.state === 'denied') outcome = `✘ Denied by ${a.by ?? 'someone'}${a.note ? ` — note: “${a.note}”` : ''}`;
  else if (a.state === 'expired') outcome = 'Expired without a decision';
  else if (a.state === 'cancelled') outcome = 'Cancelled';
  return (
    <article class="msg card approval" aria-label={`Approval: ${a.label}`}>
      <p class="card-kind">Approval needed</p>
      <p class="card-title">{a.label}</p>
      {a.preview ? <pre class="preview">{a.preview}</pre> : null}
      {a.state === 'pending' ? (
        <div class="buttons">
          <button type="button" class="primary" onClick={() => act(tell, { kind: 'approval', id: a.id, choice: 'once' })}>
            Approve
          </button>
          <button type="button" onClick={() => act(tell, { kind: 'approval', id: a.id, choice: 'deny' })}>
            Deny
          </button>
          <button type="button" onClick={() => act(tell, { kind: 'approval', id: a.id, choice: 'session' })}>
            This session
          </button>
          <button type="button" title={a.alwaysCovers ? `Always allow ${a.alwaysCovers}` : undefined} onClick={() => act(tell, { kind: 'approval', id: a.id, choice: 'always' })}>
            Always
          </button>
        </div>
      ) : a.state === 'awaiting_note' ? (
        <div>
          <p class="outcome">✘ Denied by {a.by ?? 'someone'}. Type a note for the model in the message box, or:</p>
          <div class="buttons">
            <button type="button" onClick={() => act(tell, { kind: 'approval', id: a.id, choice: 'no_note' })}>
              No note
            </button>
          </div>
        </div>
      ) : (
        <p class="outcome">{outcome}</p>
      )}
    </article>
  );
}

function QuestionCard({ q, tell }: { q: Question; tell: Tell }) {
  return (
    <article class="msg card question" aria-label="Question">
      <p class="card-kind">Question</p>
      <p class="card-title">{q.question}</p>
      {q.state === 'pending' ? (
        <div>
          <div class="buttons">
            {q.answers.map((answer, index) => (
              <button type="button" key={answer} onClick={() => act(tell, { kind: 'question', id: q.id, index })}>
                {answer}
              </button>
            ))}
          </div>
          <p class="hint">…or type your answer in the message box.</p>
        </div>
      ) : (
        <p class="outcome">{q.state === 'answered' ? `Answered “${q.answer ?? ''}” by ${q.by ?? 'someone'}` : `(${q.state})`}</p>
      )}
    </article>
  );
}

const TOOL_ICON: Record<string, string> = { running: '⋯', done: '✔', failed: '⚠', cancelled: '■', rejected: '⊘' };

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
          {b.buttons?.map((line, i) => (
            <div class="buttons" key={i}>
              {line.map((btn) => (
                <button type="button" key={btn.label} onClick={() => act(tell, btn.action)}>
                  {btn.label}
                </button>
              ))}
            </div>
          ))}
        </article>
      );
    case 'notice':
      return (
        <article class={`msg notice ${b.level}`} aria-label="Notice">
          {b.level === 'error' ? '⚠ ' : 'ℹ '}
          {b.text}
        </article>
      );
    case 'tool':
      return (
        <article class="msg tool" aria-label="Tool">
          {TOOL_ICON[b.state] ?? '•'} {b.label}
          {b.summary ? ` — ${b.summary}` : ''}
          {b.tail ? <pre class="tail">{b.tail}</pre> : null}
        </article>
      );
    case 'file':
      return (
        <article class="msg bot" aria-label="File">
          <a class="file" href={`/api/file?ref=${encodeURIComponent(row.ref)}`} download={b.name}>
            {b.name}
          </a>
          {b.caption ? <p class="caption">{b.caption}</p> : null}
        </article>
      );
    case 'approval':
      return <ApprovalCard a={b} tell={tell} />;
    case 'question':
      return <QuestionCard q={b} tell={tell} />;
  }
}
