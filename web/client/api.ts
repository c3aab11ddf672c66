/** The page's calls to the server: JSON with the session's CSRF token on every change. */

/** The signed-in user. */
export interface Session {
  user: string;
  admin: boolean;
  csrf: string;
  /** The model is the built-in scripted demo (`switchboard start --demo`). */
  demo?: boolean;
}

let csrf = '';

/** Read the session (401 → the server shows the login page on reload). */
export async function loadSession(): Promise<Session | null> {
  const res = await fetch('/api/session', { credentials: 'same-origin' });
  if (!res.ok) return null;
  const s = (await res.json()) as Session;
  csrf = s.csrf;
  return s;
}

/** POST JSON; resolves with the answer's JSON and whether it was ok. */
export async function post<T = Record<string, unknown>>(path: string, body: unknown): Promise<{ ok: boolean; status: number; data: T }> {
  const res = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
    body: JSON.stringify(body),
  });
  const data = (await res.json().catch(() => ({}))) as T;
  return { ok: res.ok, status: res.status, data };
}

/**
 * A new message's id, the server's key for it: a POST sent again with it (after the network
 * failed, or by the user) is taken as the same message, shown and answered once. Random bytes
 * rather than `crypto.randomUUID`, which a page over plain HTTP (not localhost) lacks.
 */
export function messageId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * `POST /api/send`, tried again (same body, same id) while the network fails: the server drops
 * the copies of a message that did arrive. An answer, even a refusal, is final.
 */
export async function sendMessage<T>(body: { id: string; [field: string]: unknown }, tries = 3): Promise<{ ok: boolean; status: number; data: T }> {
  for (let i = 1; ; i++) {
    try {
      return await post<T>('/api/send', body);
    } catch (err) {
      if (i >= tries) throw err;
      await new Promise((r) => setTimeout(r, 500 * i));
    }
  }
}

/** Upload one file; resolves with its workspace path and name. */
export async function uploadFile(file: File): Promise<{ path: string; name: string }> {
  const res = await fetch(`/api/upload?name=${encodeURIComponent(file.name)}`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/octet-stream', 'x-csrf-token': csrf },
    body: file,
  });
  const data = (await res.json().catch(() => ({}))) as { path?: string; name?: string; error?: string };
  if (!res.ok || !data.path) throw new Error(data.error ?? `upload failed (HTTP ${res.status})`);
  return { path: data.path, name: data.name ?? file.name };
}

export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { credentials: 'same-origin' });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return (await res.json()) as T;
}
