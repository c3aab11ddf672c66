/**
 * The web chat's client: Preact (a 4 kB React-shaped library: components and hooks for a page of
 * lists and forms, no build plugins beyond esbuild's JSX) renders the chat or the operator console.
 */
import { render } from 'preact';
import { Admin } from './admin.js';
import { loadSession } from './api.js';
import { Chat } from './chat.js';

const root = document.getElementById('root');
void loadSession().then((session) => {
  if (!root) return;
  if (!session) {
    location.reload();
    return;
  }
  render(document.body.dataset.page === 'admin' ? <Admin session={session} /> : <Chat session={session} />, root);
});
