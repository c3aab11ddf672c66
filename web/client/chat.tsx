/**
 * The chat page: conversations on the side, the messages of one, the message box. Messages come
 * from one Server-Sent Events stream (the browser resumes it with `Last-Event-ID` by itself);
 * everything the user does is a POST with the CSRF token.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { post, type Session, uploadFile } from './api.js';
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
  const [notes, setNotes] = useState<Note[]>([]);
  const [online, setOnline] = useState(true);
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

  const shown = useMemo(() => [...rows.values()].filter((r) => r.thread === thread).sort((a, b) => a.pos - b.pos), [rows, thread]);
  const threads = useMemo(() => {
    const first = new Map<string, Row>();
    for (const r of [...rows.values()].sort((a, b) => a.pos - b.pos)) if (!first.has(r.thread) || (first.get(r.thread)!.body?.kind !== 'user' && r.body?.kind === 'user')) first.set(r.thread, r);
    const list = [...first.entries()].map(([key, r]) => ({ key, title: r.body?.kind === 'user' ? r.body.text.slice(0, 40) || 'Attachment' : 'Conversation', pos: r.pos }));
    for (const key of extraThreads) if (!first.has(key)) list.push({ key, title: 'Empty conversation', pos: Number.MAX_SAFE_INTEGER });
    if (!list.some((t) => t.key === thread)) list.push({ key: thread, title: 'Empty conversation', pos: Number.MAX_SAFE_INTEGER });
    return list.sort((a, b) => b.pos - a.pos);
  }, [rows, extraThreads, thread]);

  useEffect(() => {
    const el = logRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [shown.length, shown.at(-1)?.id]);

  const open = (key: string) => {
    location.hash = key ? `#${encodeURIComponent(key)}` : '';
    setThread(key);
    inputRef.current?.focus();
  };

  const sendNow = async () => {
    const t = text.trim();
    if (!t && files.length === 0) return;
    setText('');
    const attached = files;
    setFiles([]);
    if (!t.startsWith('/')) setRunning((r) => ({ ...r, [thread]: true }));
    const r = await post<{ status?: string; error?: string }>('/api/send', { thread, text: t, files: attached });
    if (!r.ok) {
      setText(t);
      setFiles(attached);
      setRunning((x) => ({ ...x, [thread]: false }));
      tell(r.data.error ?? `not sent (HTTP ${r.status})`);
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
