/**
 * The web chat's note pages (sign in, admins only, a used link) show the commands they name as
 * code, not between backticks, and stay free of anything but the sanitised markup.
 */
import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { page } from '../../src/channels/web/http.js';

/** The HTML a page answer writes, and its status. */
function render(which: 'login' | 'forbidden' | 'used'): { status: number; html: string } {
  let status = 0;
  let html = '';
  const res = {
    writeHead(code: number) {
      status = code;
      return res;
    },
    end(body: string) {
      html = body;
    },
  };
  page(res as unknown as http.ServerResponse, 401, which);
  return { status, html };
}

describe('note pages', () => {
  it('the sign-in page shows `switchboard start` and `switchboard web link` as code', () => {
    const { status, html } = render('login');
    expect(status).toBe(401);
    expect(html).toContain('<code>switchboard start</code>');
    expect(html).toContain('<code>switchboard web link</code>');
    expect(html).not.toContain('`');
  });

  it('so do the other notes', () => {
    expect(render('forbidden').html).toContain('<code>switchboard web link --admin</code>');
    expect(render('used').html).toContain('<code>switchboard web link</code>');
    for (const which of ['forbidden', 'used'] as const) expect(render(which).html).not.toContain('`');
  });
});
