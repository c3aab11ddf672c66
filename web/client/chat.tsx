/**
 * The chat page: conversations on the side, the messages of one, the message box. Messages come
 * from one Server-Sent Events stream (the browser resumes it with `Last-Event-ID` by itself);
 * everything the user does is a POST with the CSRF token.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { messageId, post, sendMessage, type Session, uploadFile } from './api.js';
import { Message, type Row, TextWithCode } from './cards.js';

const threadOf = () => decodeURIComponent(location.hash.replace(/^#/, ''));

/** A key for a new conversation. */
const newThread = () => Math.random().toString(36).slice(2, 10);

interface Note {
  id: number;
  thread: string;
  text: string;
}

export function Chat({ session }: { session: Session }) {
  const [rows, setRows] = useState<Map<string, Row>>(new Map());
  const [thread, setThread] = useState(threadOf());
  const [extraThreads, setExtraThreads] = useState<string[]>([]);
  const [running, setRunning] = useState<Record<string, boolean>>({});
  const [text, setText] = useState('');
  const [files, setFiles] = useState<Array<{ path: string; name: string }>>([]);
  /** The message whose sending failed on the network, with its id (see `sendNow`). */
  const unsent = useRef<{ id: string; text: string; files: Array<{ path: string; name: string }> } | null>(null);
  const [notes, setNotes] = useState<Note[]>([]);
  const [online, setOnline] = useState(true);
  /** The stream has sent the whole stored history once. */
  const [ready, setReady] = useState(false);
  const opened = useRef(false);
  /** The name being edited (null: not renaming), and whether deleting waits for a confirmation. */
  const [naming, setNaming] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const nameRef = useRef<HTMLInputElement>(null);
  const keepRef = useRef<HTMLButtonElement>(null);
  // Focus follows the bar: into the name box when renaming starts, onto "Keep" when deleting asks.
  useEffect(() => {
    if (naming !== null) nameRef.current?.focus();
  }, [naming !== null]);
  useEffect(() => {
    if (confirming) keepRef.current?.focus();
  }, [confirming]);
  const logRef = useRef<HTMLDivElement>(null);
  const inputRef = useRef<HTMLTextAreaElement>(null);

  const tell = (t: string, where = thread) => setNotes((n) => [...n.slice(-4), { id: Date.now() + Math.random(), thread: where, text: t }]);

  useEffect(() => {
    const es = new EventSource('/api/stream');
    es.onmessage = (ev) => {
      const row = JSON.parse(ev.data as string) as Row;
      setRows((prev) => {
        const next = new Map(prev);
        if (row.body) next.set(row.ref, row);
        else next.delete(row.ref);
        return next;
      });
    };
    es.addEventListener('signal', (ev) => {
      const s = JSON.parse((ev as MessageEvent).data as string) as { thread: string; running: boolean };
      setRunning((r) => ({ ...r, [s.thread]: s.running }));
    });
    es.addEventListener('ready', () => setReady(true));
    es.onopen = () => setOnline(true);
    es.onerror = () => setOnline(false);
    const onHash = () => setThread(threadOf());
    window.addEventListener('hashchange', onHash);
    return () => {
      es.close();
      window.removeEventListener('hashchange', onHash);
    };
  }, []);

  // The Stop button after a reload or reconnect: ask whether a turn of this conversation runs.
  useEffect(() => {
    if (!online) return;
    fetch(`/api/status?thread=${encodeURIComponent(thread)}`, { credentials: 'same-origin' })
      .then((r) => (r.ok ? r.json() : null))
      .then((s: { running?: boolean } | null) => s && setRunning((r) => ({ ...r, [thread]: !!s.running })))
      .catch(() => undefined);
  }, [thread, online]);

  // A thread's own row (its name, or that it was deleted) is not a message.
  const meta = useMemo(() => {
    const m = new Map<string, { title: string | null; deleted: boolean }>();
    for (const r of rows.values()) if (r.body?.kind === 'thread') m.set(r.thread, r.body);
    return m;
  }, [rows]);
  const shown = useMemo(
    () => [...rows.values()].filter((r) => r.thread === thread && r.body?.kind !== 'thread').sort((a, b) => a.pos - b.pos),
    [rows, thread],
  );
  // Conversations, the most recently active first, named by the user or by their first message.
  const threads = useMemo(() => {
    const info = new Map<string, { first: Row | undefined; last: number }>();
    for (const r of [...rows.values()].sort((a, b) => a.pos - b.pos)) {
      if (r.body?.kind === 'thread' || meta.get(r.thread)?.deleted) continue;
      const t = info.get(r.thread) ?? { first: undefined, last: 0 };
      if (!t.first || (t.first.body?.kind !== 'user' && r.body?.kind === 'user')) t.first = r;
      t.last = r.pos;
      info.set(r.thread, t);
    }
    const list = [...info.entries()].map(([key, t]) => ({
      key,
      title: meta.get(key)?.title ?? (t.first?.body?.kind === 'user' ? t.first.body.text.slice(0, 40) || 'Attachment' : 'Conversation'),
      pos: t.last,
      empty: false,
    }));
    for (const key of extraThreads) if (!info.has(key)) list.push({ key, title: 'Empty conversation', pos: Number.MAX_SAFE_INTEGER, empty: true });
    if (!list.some((t) => t.key === thread)) list.push({ key: thread, title: 'Empty conversation', pos: Number.MAX_SAFE_INTEGER, empty: true });
    return list.sort((a, b) => b.pos - a.pos);
  }, [rows, meta, extraThreads, thread]);
  const current = threads.find((t) => t.key === thread);

  // Once the history is in: with no conversation named in the address, open the newest; a deleted
  // one (here or in another tab) gives way to the newest left, or a fresh one.
  useEffect(() => {
    if (!ready) return;
    const firstLook = !opened.current;
    opened.current = true;
    if (!(firstLook && !location.hash) && !meta.get(thread)?.deleted) return;
    const newest = threads.find((t) => !t.empty && t.key !== thread);
    if (newest) open(newest.key);
    else if (meta.get(thread)?.deleted) open(newThread());
  }, [ready, meta, thread]);

  // A turn runs and nothing is shown of its answer yet (or a tool call just finished): say so.
  const last = shown.at(-1)?.body;
  const thinking =
    !!running[thread] && (!last || last.kind === 'user' || (last.kind === 'card' && last.view.card === 'tool' && !!last.output));

  useEffect(() => {
    const el = logRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [shown.length, shown.at(-1)?.id]);

  const open = (key: string) => {
    location.hash = key ? `#${encodeURIComponent(key)}` : '';
    setThread(key);
    setNaming(null);
    setConfirming(false);
    inputRef.current?.focus();
  };

  const rename = async (e: Event) => {
    e.preventDefault();
    if (naming === null) return;
    const r = await post<{ error?: string }>('/api/conversation/rename', { thread, title: naming });
    if (r.ok) setNaming(null);
    else tell(r.data.error ?? `not renamed (HTTP ${r.status})`);
  };

  const remove = async () => {
    const r = await post<{ error?: string }>('/api/conversation/delete', { thread });
    setConfirming(false);
    if (!r.ok) tell(r.data.error ?? `not deleted (HTTP ${r.status})`);
  };

  const sendNow = async () => {
    const t = text.trim();
    if (!t && files.length === 0) return;
    setText('');
    const attached = files;
    setFiles([]);
    // A message sent again unchanged after a failure keeps its id: if the first try did arrive, the server drops this one.
    const last = unsent.current;
    const same = last && last.text === t && last.files.map((f) => f.path).join('\n') === attached.map((f) => f.path).join('\n');
    const id = same ? last.id : messageId();
    unsent.current = null;
    if (!t.startsWith('/')) setRunning((r) => ({ ...r, [thread]: true }));
    type Sent = { status?: string; error?: string; inChat?: boolean };
    const r = await sendMessage<Sent>({ thread, text: t, files: attached, id }).catch(
      (err: Error) => ({ ok: false, status: 0, data: { error: `not sent (${err.message})` } as Sent }),
    );
    if (!r.ok) {
      if (r.status === 0) unsent.current = { id, text: t, files: attached };
      setText(t);
      setFiles(attached);
      setRunning((x) => ({ ...x, [thread]: false }));
      // A refusal the chat shows as a message already (the first over the flood limit) is not said twice.
      if (!r.data.inChat) tell(r.data.error ?? `not sent (HTTP ${r.status})`);
    }
  };

  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      void sendNow();
    }
  };

  const attach = async (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    for (const f of [...(input.files ?? [])]) {
      try {
        const up = await uploadFile(f);
        setFiles((list) => [...list, up]);
      } catch (err) {
        tell((err as Error).message);
      }
    }
    input.value = '';
  };

  const stop = async () => {
    const r = await post<{ stopped?: boolean }>('/api/stop', { thread });
    setRunning((x) => ({ ...x, [thread]: false }));
    if (r.ok && !r.data.stopped) tell('Nothing was running.');
  };

  return (
    <div class="app">
      <nav aria-label="Conversations" class="side">
        <button type="button" class="new" onClick={() => {
          const key = newThread();
          setExtraThreads((x) => [...x, key]);
          open(key);
        }}>
          New conversation
        </button>
        <ul>
          {threads.map((t) => (
            <li key={t.key}>
              <button type="button" aria-current={t.key === thread ? 'page' : undefined} onClick={() => open(t.key)}>
                {t.title}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <main class="main">
        <header class="top">
          <strong>switchboard</strong>
          {session.demo ? (
            <span class="demo" role="note">
              [demo] a scripted model, not an LLM
            </span>
          ) : null}
          <span class="who">
            web:{session.user}
            {session.admin ? (
              <a href="/admin" class="admin-link">
                Admin
              </a>
            ) : null}
          </span>
          {online ? null : <span class="offline" role="status">reconnecting…</span>}
        </header>
        {current && !current.empty ? (
          <div class="conv-bar">
            {naming !== null ? (
              <form class="rename" onSubmit={rename}>
                <input
                  type="text"
                  aria-label="Conversation name"
                  value={naming}
                  maxLength={80}
                  ref={nameRef}
                  onInput={(e) => setNaming((e.currentTarget as HTMLInputElement).value)}
                  onKeyDown={(e) => e.key === 'Escape' && setNaming(null)}
                />
                <button type="submit" class="primary">
                  Save
                </button>
                <button type="button" onClick={() => setNaming(null)}>
                  Cancel
                </button>
              </form>
            ) : (
              <>
                <h1 class="conv-title">{current.title}</h1>
                {confirming ? (
                  <span class="confirm" role="group" aria-label="Delete this conversation?">
                    <span>Delete it for good?</span>
                    <button type="button" class="danger" onClick={remove}>
                      Delete
                    </button>
                    <button type="button" ref={keepRef} onClick={() => setConfirming(false)}>
                      Keep
                    </button>
                  </span>
                ) : (
                  <>
                    <button type="button" class="quiet" onClick={() => setNaming(current.title)}>
                      <span class="icon" aria-hidden="true">
                        ✏️
                      </span>{' '}
                      Rename
                    </button>
                    <button type="button" class="quiet" onClick={() => setConfirming(true)}>
                      <span class="icon" aria-hidden="true">
                        🗑️
                      </span>{' '}
                      Delete
                    </button>
                  </>
                )}
              </>
            )}
          </div>
        ) : null}
        <div class="log" ref={logRef} aria-live="polite">
          {shown.length === 0 ? (
            <p class="empty">
              {session.demo
                ? 'This is the demo: the answers come from a small script built into switchboard, not from an LLM. Say "write a file" for an approval card or "ask me something" for a question. Enter sends.'
                : 'Ask anything. Enter sends, Shift+Enter starts a new line.'}
            </p>
          ) : null}
          {shown.map((row) => (
            <Message key={row.ref} row={row} tell={(t) => tell(t)} />
          ))}
          {thinking ? (
            <p class="thinking" role="status">
              <span class="dots" aria-hidden="true">
                <span />
                <span />
                <span />
              </span>
              Thinking…
            </p>
          ) : null}
          {notes
            .filter((n) => n.thread === thread)
            .map((n) => (
              <p class="ephemeral" role="status" key={n.id}>
                <TextWithCode text={n.text} />
              </p>
            ))}
        </div>
        <form class="composer" onSubmit={(e) => {
          e.preventDefault();
          void sendNow();
        }}>
          {files.length ? (
            <p class="attached">
              {files.map((f) => (
                <span key={f.path}>Attached: {f.name} </span>
              ))}
            </p>
          ) : null}
          <div class="row">
            <label class="attach">
              <span aria-hidden="true">Attach</span>
              <input type="file" aria-label="Attach" onChange={attach} multiple />
            </label>
            <textarea
              ref={inputRef}
              aria-label="Message"
              rows={2}
              placeholder="Message"
              value={text}
              onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
              onKeyDown={onKey}
            />
            {running[thread] ? (
              <button type="button" class="stop" onClick={stop}>
                Stop
              </button>
            ) : null}
            <button type="submit" class="primary">
              Send
            </button>
          </div>
        </form>
      </main>
    </div>
  );
}
