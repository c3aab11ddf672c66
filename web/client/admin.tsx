/**
 * The operator console (`/admin`): what waits in every conversation, jobs, approval rules,
 * pairing requests, tool servers and failed deliveries. Read every few seconds; every button is
 * one POST to `/api/admin/action`.
 */
import { useEffect, useState } from 'preact/hooks';
import { getJson, post, type Session } from './api.js';

interface State {
  approvals: Array<{ id: string; label: string; preview: string; requester: string; conversation: string }>;
  questions: Array<{ id: string; question: string; answers: string[]; conversation: string }>;
  jobs: Array<{ id: string; name: string; state: string; schedule: string; next: number | null; owner: string }>;
  rules: Array<{ id: number; text: string }>;
  pairing: Array<{ code: string; channel: string; user: string; name: string; expires: number }>;
  mcp: Array<{ name: string; state: string; tools: string[]; error: string | null }>;
  failed: Array<{ id: number; kind: string; conversation: string; status: string; error: string | null; at: number }>;
}

const when = (ms: number | null) => (ms ? new Date(ms).toLocaleString() : '—');

export function Admin({ session }: { session: Session }) {
  const [state, setState] = useState<State | null>(null);
  const [message, setMessage] = useState('');
  const load = () =>
    getJson<State>('/api/admin/state')
      .then(setState)
      .catch((err: Error) => setMessage(`Could not load: ${err.message}`));
  useEffect(() => {
    void load();
    const timer = setInterval(load, 3000);
    return () => clearInterval(timer);
  }, []);
  const act = async (body: Record<string, unknown>) => {
    const r = await post<{ message?: string; error?: string }>('/api/admin/action', body);
    setMessage(r.data.message ?? r.data.error ?? (r.ok ? 'Done.' : `Refused (HTTP ${r.status}).`));
    await load();
  };
  if (!state) return <main class="admin"><p>Loading…</p></main>;
  return (
    <main class="admin">
      <header class="top">
        <strong>switchboard · operator console</strong>
        <span class="who">
          web:{session.user} <a href="/">Chat</a>
        </span>
      </header>
      {message ? <p role="status" class="ephemeral">{message}</p> : null}
      <section aria-labelledby="h-approvals">
        <h2 id="h-approvals">Pending approvals</h2>
        {state.approvals.length === 0 ? <p class="empty">None.</p> : null}
        {state.approvals.map((a) => (
          <article class="card" key={a.id} aria-label={`Approval: ${a.label}`}>
            <p class="card-title">{a.label}</p>
            <p class="meta">{a.conversation} · asked by {a.requester}</p>
            {a.preview ? <pre class="preview">{a.preview}</pre> : null}
            <div class="buttons">
              <button type="button" class="primary" onClick={() => act({ action: { kind: 'approval', id: a.id, choice: 'once' } })}>Approve</button>
              <button type="button" onClick={() => act({ action: { kind: 'approval', id: a.id, choice: 'no_note' } })}>Deny</button>
              <button type="button" onClick={() => act({ action: { kind: 'approval', id: a.id, choice: 'session' } })}>This session</button>
              <button type="button" onClick={() => act({ action: { kind: 'approval', id: a.id, choice: 'always' } })}>Always</button>
            </div>
          </article>
        ))}
      </section>
      <section aria-labelledby="h-questions">
        <h2 id="h-questions">Pending questions</h2>
        {state.questions.length === 0 ? <p class="empty">None.</p> : null}
        {state.questions.map((q) => (
          <article class="card" key={q.id} aria-label="Question">
            <p class="card-title">{q.question}</p>
            <p class="meta">{q.conversation}</p>
            <div class="buttons">
              {q.answers.map((answer, index) => (
                <button type="button" key={answer} onClick={() => act({ action: { kind: 'question', id: q.id, index } })}>{answer}</button>
              ))}
            </div>
          </article>
        ))}
      </section>
      <section aria-labelledby="h-jobs">
        <h2 id="h-jobs">Jobs</h2>
        {state.jobs.length === 0 ? <p class="empty">None.</p> : null}
        <ul class="rows">
          {state.jobs.map((j) => (
            <li key={j.id}>
              <span><strong>{j.name}</strong> · {j.state} · {j.schedule} · next {when(j.next)} · {j.owner}</span>
              <span class="buttons">
                {j.state === 'paused' ? <button type="button" onClick={() => act({ action: { kind: 'job', op: 'resume', id: j.id } })} aria-label={`Resume ${j.name}`}>Resume</button> : <button type="button" onClick={() => act({ action: { kind: 'job', op: 'pause', id: j.id } })} aria-label={`Pause ${j.name}`}>Pause</button>}
                <button type="button" onClick={() => act({ action: { kind: 'job', op: 'run', id: j.id } })} aria-label={`Run ${j.name} now`}>Run now</button>
                <button type="button" onClick={() => act({ action: { kind: 'job', op: 'delete', id: j.id } })} aria-label={`Delete ${j.name}`}>Delete</button>
              </span>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="h-rules">
        <h2 id="h-rules">Approval rules</h2>
        {state.rules.length === 0 ? <p class="empty">None stored.</p> : null}
        <ul class="rows">
          {state.rules.map((r) => (
            <li key={r.id}>
              <code>{r.text}</code>
              <button type="button" onClick={() => act({ type: 'revoke', id: String(r.id) })} aria-label={`Revoke rule ${r.id}`}>Revoke</button>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="h-pairing">
        <h2 id="h-pairing">Pairing requests</h2>
        {state.pairing.length === 0 ? <p class="empty">None.</p> : null}
        <ul class="rows">
          {state.pairing.map((p) => (
            <li key={p.code}>
              <span><code>{p.code}</code> {p.channel}:{p.user} ({p.name}) · until {when(p.expires)}</span>
              <button type="button" onClick={() => act({ action: { kind: 'pairing', code: p.code } })} aria-label={`Let in ${p.name}`}>Let in</button>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="h-mcp">
        <h2 id="h-mcp">MCP servers</h2>
        {state.mcp.length === 0 ? <p class="empty">None configured.</p> : null}
        <ul class="rows">
          {state.mcp.map((m) => (
            <li key={m.name}>
              <span><strong>{m.name}</strong> · {m.state}{m.error ? ` · ${m.error}` : ''} · {m.tools.length ? m.tools.join(', ') : 'no tools'}</span>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="h-failed">
        <h2 id="h-failed">Failed deliveries</h2>
        {state.failed.length === 0 ? <p class="empty">None.</p> : null}
        <ul class="rows">
          {state.failed.map((d) => (
            <li key={d.id}>
              <span>#{d.id} {d.kind} · {d.status} · {d.conversation} · {when(d.at)} · {d.error ?? ''}</span>
            </li>
          ))}
        </ul>
      </section>
    </main>
  );
}
