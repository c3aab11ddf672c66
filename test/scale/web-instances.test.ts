/**
 * The web chat over two `switchboard start` processes sharing one PostgreSQL database, behind a
 * round-robin proxy without sticky sessions: each new connection goes to the next instance, so a
 * page's event stream is served by one instance while its POSTs (send, approve) land on the other.
 * A login made through one instance is a session on the other; every answer reaches the page
 * once and whole, also when the instance running the turn, or the other one (serving a page),
 * is SIGKILLed mid-answer and started again (the survivor takes a dead runner's turn over at once,
 * not when its lease runs out); Stop pressed through the instance not running the turn aborts the
 * model call on the one that is; a card decided through either instance updates the
 * pages on both (also a page in Chromium); a reload, through either instance, shows the whole
 * history; and an instance stopped with pages connected hands them to the other.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLink } from '../../src/channels/web/auth.js';
import type { Db } from '../../src/store/db.js';
import { type ScriptedLlm, type ScriptedStep, startScriptedLlm } from '../emulators/llm.js';
import { launchBrowser } from '../helpers/browser.js';
import { childEnv, killLeftRunning, type StartedProcess, startProcess } from '../helpers/child-start.js';
import { type RoundRobinProxy, startRoundRobinProxy } from '../helpers/round-robin-proxy.js';
import { skipped } from '../helpers/skips.js';
import { skipReason } from '../helpers/system-tools.js';
import { openTestDatabase, postgresOnly } from '../helpers/test-db.js';
import {
  type ChatStream,
  openStream,
  plainText,
  redeemLink,
  type Tab,
  tabOf,
  threadRows,
  type WireRow,
} from '../helpers/web-client.js';

const USER = 'alice';
const answerOf = (q: string) => `Answer to ${q}: ${Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ')} END.`;

/**
 * `qN` streams its answer over about two seconds (room for a kill mid-answer); `write qN` asks to
 * write a file (an approval card) and then says how it went; `hang qN` streams a first line and
 * then keeps the request open until the client goes away (a turn to stop).
 */
function model(body: { messages: Array<{ role: string; content: string | null }> }): ScriptedStep {
  const last = body.messages.at(-1);
  const asked = String(body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
  const q = /(write |hang )?q\d+/.exec(asked)?.[0] ?? asked;
  if (q.startsWith('hang ')) return { hang: true, text: `Working on ${q}` };
  if (q.startsWith('write '))
    return last?.role === 'tool'
      ? { text: `Finished ${q}: ${String(last.content).slice(0, 40)}` }
      : { toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: `${q.slice(6)}.txt`, content: q }) }] };
  return { text: answerOf(q), chunkSize: 6, delayMs: 50 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `check` every 50 ms until it holds; the failure says what was awaited and what was seen. */
async function until<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 30_000,
  detail?: () => unknown,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${detail ? `: ${JSON.stringify(detail())}` : ''}`);
    await sleep(50);
  }
}

const noBrowser = skipReason('chromium', 'one check drives a real browser');
const onlyPostgres = postgresOnly('two instances over one database need a server, not one SQLite file');

describe.skipIf(onlyPostgres !== undefined)(
  `the web chat over two instances behind a round-robin proxy${skipped(onlyPostgres)}`,
  () => {
    let llm: ScriptedLlm;
    let proxy: RoundRobinProxy;
    let dir: string;
    let env: Record<string, string>;
    let db: Db;
    /** The instance in each proxy slot (a killed one is replaced in its slot). */
    const slots: Array<StartedProcess | null> = [null, null];
    const everStarted: StartedProcess[] = [];
    /** Pages kept open through the whole suite (one per instance, chosen by the proxy). */
    const streams: ChatStream[] = [];
    let cookie = '';
    let csrf = '';

    const portOf = (p: StartedProcess) => Number(p.logs.find((l) => l.msg === 'switchboard started')?.port);

    async function startSlot(i: number): Promise<void> {
      const p = await startProcess(env, 60_000);
      everStarted.push(p);
      slots[i] = p;
      proxy.backends[i] = `http://127.0.0.1:${portOf(p)}`;
    }

    async function killSlot(i: number): Promise<void> {
      proxy.backends[i] = null;
      await slots[i]?.kill();
      slots[i] = null;
    }

    /** A new tab of the signed-in user (alice, or the `as` session) whose connection the proxy sent to instance `slot`. */
    async function tabOn(slot: number, as = { cookie, csrf }): Promise<Tab> {
      for (let tries = 0; tries < 4; tries++) {
        const tab = tabOf(proxy.url, as.cookie, as.csrf);
        const r = await tab.get('/api/session');
        expect(r.status).toBe(200);
        if (r.backend === slot) return tab;
        tab.agent.destroy();
      }
      throw new Error(`no connection reached instance ${slot}`);
    }

    /** A page's stream whose connection the proxy sent to instance `slot`. */
    async function streamOn(slot: number, as = cookie): Promise<ChatStream> {
      for (let tries = 0; tries < 4; tries++) {
        const s = openStream(proxy.url, as);
        if ((await s.connected()) === slot) return s;
        s.close();
      }
      throw new Error(`no stream reached instance ${slot}`);
    }

    /** The lease row of the conversation of `thread`, if both exist. */
    async function leaseOf(
      thread: string,
    ): Promise<{ holder: string; expires_at: number; claimed_at: number; taken_over: number } | undefined> {
      const conv = await db
        .selectFrom('conversations')
        .select('id')
        .where('channel', '=', 'web')
        .where('chat_key', '=', USER)
        .where('thread_key', '=', thread)
        .where('archived', '=', 0)
        .executeTakeFirst();
      if (!conv) return undefined;
      const row = await db
        .selectFrom('leases')
        .select(['holder', 'expires_at', 'claimed_at', 'taken_over'])
        .where('name', '=', `conv:${conv.id}`)
        .executeTakeFirst();
      return row && { ...row, expires_at: Number(row.expires_at), claimed_at: Number(row.claimed_at) };
    }

    /** The process id in a lease holder's id. */
    const pidOf = (holder: string | undefined) => Number(holder?.split(':')[1]);

    /** The slot of the instance holding the lease of the conversation of `thread` (running its turn). */
    async function runnerOf(thread: string): Promise<number | undefined> {
      const pid = pidOf((await leaseOf(thread))?.holder);
      const slot = slots.findIndex((p) => p?.child.pid === pid);
      return slot >= 0 ? slot : undefined;
    }

    /** The bot's text rows of a thread as a stream shows them. */
    const answers = (s: ChatStream, thread: string) =>
      threadRows(s, thread)
        .filter((r) => r.body?.kind === 'text')
        .map(plainText);

    /**
     * Every text a stream was shown for one answer is a prefix of the whole answer (never doubled
     * or mixed with another), and the answer stands in one message, whole.
     */
    function expectShownOnceAndWhole(s: ChatStream, thread: string, whole: string): void {
      const shown = answers(s, thread).filter((t) => t.startsWith(whole.slice(0, 12)));
      expect(shown, `thread ${thread}`).toEqual([whole]);
      const ref = threadRows(s, thread).find((r) => plainText(r) === whole)!.ref;
      for (const e of s.events.filter((x) => x.ref === ref && x.body))
        expect(whole.startsWith(plainText(e)), `a version of the answer in ${thread}: ${plainText(e)}`).toBe(true);
    }

    beforeAll(async () => {
      llm = await startScriptedLlm();
      llm.setHandler(model);
      proxy = await startRoundRobinProxy([null, null]);
      dir = mkdtempSync(path.join(os.tmpdir(), 'sb-webscale-'));
      env = childEnv(dir, llm.url, '[web]\nstream_interval_ms = 100\n\n[access]\nrate_limit_per_minute = 10000\n', {
        TELEGRAM_BOT_TOKEN: '',
        SLACK_BOT_TOKEN: '',
      });
      await startSlot(0);
      await startSlot(1);
      db = openTestDatabase(dir, 'db');
    }, 150_000);

    afterAll(async () => {
      for (const s of streams) s.close();
      await killLeftRunning(everStarted);
      await db?.destroy();
      await proxy?.close();
      await llm?.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    });

    it('a login made through one instance is a session on the other', async () => {
      const link = await createLoginLink(db, proxy.url, { user: USER, admin: false, ttlMinutes: 5 });
      const signedIn = await redeemLink(link.url);
      cookie = signedIn.cookie;
      // The next connection goes to the other instance: the session made by the first works there.
      const tab = tabOf(proxy.url, cookie);
      const session = await tab.get('/api/session');
      expect(session.status).toBe(200);
      expect(session.json.user).toBe(USER);
      expect(session.backend).not.toBe(signedIn.backend);
      csrf = session.json.csrf;
      tab.agent.destroy();
      // The link was used up on the first instance: the second refuses it too.
      const again = await redeemLink(link.url).catch((err: Error) => err.message);
      expect(again).toBe('login link answered 403');
    });

    it('answers stream once and whole to pages on both instances, sent through either', async () => {
      streams.push(await streamOn(0), await streamOn(1));
      for (const [i, thread] of ['t1', 't2'].entries()) {
        // Sent through one instance and then the other; each page follows from its own.
        const tab = await tabOn(i);
        const q = `q${i + 1}`;
        const r = await tab.post('/api/send', { thread, text: q });
        expect(r.status).toBe(200);
        tab.agent.destroy();
        for (const s of streams)
          await until(
            () => answers(s, thread).includes(answerOf(q)),
            `the answer to ${q}`,
            30_000,
            () => answers(s, thread),
          );
      }
      for (const s of streams) {
        expectShownOnceAndWhole(s, 't1', answerOf('q1'));
        expectShownOnceAndWhole(s, 't2', answerOf('q2'));
        // The Stop button's signal reached both pages, wherever the turn ran.
        expect(s.signals.some((x) => x.thread === 't1' && x.running)).toBe(true);
        expect(s.signals.some((x) => x.thread === 't1' && !x.running)).toBe(true);
      }
    });

    it.each([
      ['the instance running the turn', 'runner', 0],
      ['the other instance (serving a page, not the turn)', 'other', 1],
    ] as const)(
      'SIGKILL of %s mid-answer, then a restart: the answer reaches every page once and whole',
      async (_name, victimKind, sendVia) => {
        const thread = `kill-${victimKind}`;
        const q = `q${3 + sendVia}`;
        // A page on each instance (a kill moves pages: start afresh).
        for (const s of streams.splice(0)) s.close();
        streams.push(await streamOn(0), await streamOn(1));
        const tab = await tabOn(sendVia);
        expect((await tab.post('/api/send', { thread, text: q })).status).toBe(200);
        tab.agent.destroy();
        // Mid-answer: some of it is shown, not all.
        for (const s of streams)
          await until(
            () => answers(s, thread).some((t) => t.startsWith(`Answer to ${q}`) && t !== answerOf(q)),
            'a half-streamed answer',
            30_000,
            () => answers(s, thread),
          );
        const runner = await runnerOf(thread);
        expect(runner).toBeDefined();
        const victim = victimKind === 'runner' ? runner! : 1 - runner!;
        await killSlot(victim);
        if (victimKind === 'runner') {
          // The dead runner's lease is still unexpired; the survivor (same host: it sees the
          // process is gone) takes it over before it ends, instead of waiting it out.
          const dead = (await leaseOf(thread))!;
          expect(dead.expires_at).toBeGreaterThan(Date.now());
          const taken = await until(async () => {
            const row = await leaseOf(thread);
            return row && row.holder !== dead.holder ? row : undefined;
          }, 'another instance to take the lease over');
          expect(pidOf(taken.holder)).toBe(slots[1 - victim]!.child.pid);
          expect(taken.taken_over).toBe(1);
          expect(taken.claimed_at).toBeLessThan(dead.expires_at);
        }
        for (const s of streams)
          await until(
            () => answers(s, thread).includes(answerOf(q)),
            `the answer to ${q} after the kill`,
            45_000,
            () => answers(s, thread),
          );
        await startSlot(victim);
        // The page whose instance died reconnected to the other one and picked up where it was.
        expect(streams.every((s) => s.backends.at(-1) === 1 - victim)).toBe(true);
        for (const s of streams) expectShownOnceAndWhole(s, thread, answerOf(q));
      },
      // Two child processes start and one is killed and started again (60 s of margin on 2 busy cores).
      90_000,
    );

    it('Stop pressed through the instance not running the turn aborts its model call; every page shows it stopped', async () => {
      for (const s of streams.splice(0)) s.close();
      streams.push(await streamOn(0), await streamOn(1));
      const thread = 'stop-elsewhere';
      const q = 'hang q10';
      const sender = await tabOn(0);
      expect((await sender.post('/api/send', { thread, text: q })).status).toBe(200);
      sender.agent.destroy();
      // The model has begun answering and keeps the request open.
      for (const s of streams)
        await until(
          () => answers(s, thread).some((t) => t.startsWith(`Working on ${q}`)),
          'the first line of the answer',
          30_000,
          () => answers(s, thread),
        );
      const modelCall = () => llm.chatRequests().find((r) => JSON.stringify(r.body.messages).includes(q));
      expect(modelCall()?.closedEarly).toBeUndefined();
      const runner = (await runnerOf(thread))!;
      expect(runner).toBeDefined();
      const stopper = await tabOn(1 - runner);
      const stopped = await stopper.post('/api/stop', { thread });
      expect(stopped.status).toBe(200);
      expect(stopped.json.stopped).toBe(true);
      // The instance running the turn was told, and closed its model request.
      await until(() => modelCall()?.closedEarly, 'the model request to be closed by the runner', 15_000);
      for (const s of streams) {
        await until(
          () => answers(s, thread).some((t) => t.startsWith(`Working on ${q}`) && t.endsWith('(stopped)')),
          'the answer marked stopped',
          30_000,
          () => answers(s, thread),
        );
        // The last word on the Stop button, from either instance, is "not running".
        await until(
          () => s.signals.filter((x) => x.thread === thread).at(-1)?.running === false,
          'the Stop button to turn off',
          30_000,
          () => s.signals.filter((x) => x.thread === thread),
        );
      }
      for (const slot of [0, 1]) {
        const tab = await tabOn(slot);
        const status = await tab.get(`/api/status?thread=${thread}`);
        tab.agent.destroy();
        expect(status.json.running, `status through instance ${slot}`).toBe(false);
      }
      stopper.agent.destroy();
      // One model call: nothing ran the stopped turn again.
      expect(llm.chatRequests().filter((r) => JSON.stringify(r.body.messages).includes(q))).toHaveLength(1);
    });

    it('a card decided through either instance updates the pages on both', async () => {
      // A page on each instance (the kills moved the old ones).
      for (const s of streams.splice(0)) s.close();
      streams.push(await streamOn(0), await streamOn(1));
      for (const [n, decision] of (['approve', 'deny'] as const).entries()) {
        const thread = `card-${decision}`;
        const q = `write q${5 + n}`;
        const sender = await tabOn(n);
        expect((await sender.post('/api/send', { thread, text: q })).status).toBe(200);
        sender.agent.destroy();
        const cardOf = (s: ChatStream): WireRow | undefined =>
          threadRows(s, thread).find((r) => r.body?.kind === 'card' && r.body.view.card === 'approval');
        for (const s of streams)
          await until(
            () => cardOf(s)?.body?.view.buttons.length,
            `the approval card of ${q}`,
            30_000,
            () => threadRows(s, thread).map(plainText),
          );
        // Tapped through the instance that did not run the turn for one card, the runner for the other.
        const runner = (await runnerOf(thread))!;
        expect(runner).toBeDefined();
        const via = decision === 'approve' ? 1 - runner : runner;
        const tapper = await tabOn(via);
        const buttons = cardOf(streams[0]!)!.body!.view.buttons.flat() as Array<{ label: string; action: unknown }>;
        const button = buttons.find((b) => b.label.includes(decision === 'approve' ? 'Approve' : 'Deny'))!;
        const tapped = await tapper.post('/api/action', { action: button.action });
        expect(tapped.status, JSON.stringify(tapped.json)).toBe(200);
        if (decision === 'deny') {
          // Denied: the card asks for a note; "No note" ends it (tapped through the same instance).
          for (const s of streams)
            await until(() => cardOf(s)?.body?.view.key?.startsWith('note:'), 'the note prompt', 30_000);
          const noNote = cardOf(streams[1]!)!.body!.view.buttons.flat()[0] as { action: unknown };
          expect((await tapper.post('/api/action', { action: noNote.action })).status).toBe(200);
        }
        tapper.agent.destroy();
        const settled = decision === 'approve' ? 'Approved: ' : 'Denied: ';
        for (const s of streams) {
          await until(
            () => cardOf(s)?.body?.view.buttons.length === 0 && cardOf(s)?.body?.view.fallback.startsWith(settled),
            `the ${decision} on the card`,
            30_000,
            () => cardOf(s)?.body?.view,
          );
          expect(cardOf(s)!.body!.view.buttons).toEqual([]);
          // The model is told, and answers on every page.
          await until(
            () => answers(s, thread).some((t) => t.startsWith(`Finished ${q}`)),
            `the answer after the ${decision} of ${q}`,
            30_000,
            () => answers(s, thread),
          );
        }
      }
      const approvals = await db.selectFrom('approvals').select('status').orderBy('created_at').execute();
      expect(approvals.map((a) => a.status)).toEqual(['approved', 'rejected']);
    });

    it('a reload through either instance shows the whole history, as the open pages have it', async () => {
      const live = streams[0]!;
      const want = [...live.rows.values()].sort((a, b) => a.pos - b.pos).map((r) => [r.ref, r.thread, plainText(r)]);
      expect(want.length).toBeGreaterThan(10);
      for (const slot of [0, 1]) {
        const reloaded = await streamOn(slot);
        await until(() => reloaded.rows.size >= want.length, 'the history', 10_000);
        const got = [...reloaded.rows.values()]
          .sort((a, b) => a.pos - b.pos)
          .map((r) => [r.ref, r.thread, plainText(r)]);
        reloaded.close();
        expect(got).toEqual(want);
      }
      for (const s of streams) expect(s.rows).toEqual(live.rows);
    });

    it.skipIf(noBrowser !== undefined)(
      `in Chromium through the proxy: a card on the page updates when approved through the other instance${skipped(noBrowser)}`,
      async () => {
        const b = await launchBrowser();
        try {
          const context = await b.browser.newContext();
          const page = await context.newPage();
          const link = await createLoginLink(db, proxy.url, { user: 'bob', admin: false, ttlMinutes: 5 });
          await page.goto(link.url);
          const box = page.getByRole('textbox', { name: 'Message' });
          await box.fill('write q8');
          await box.press('Enter');
          const card = page.getByRole('article', { name: /^Approval: / });
          await card.getByRole('button', { name: 'Approve', exact: true }).waitFor();
          // Bob's session, and the instance serving the page's event stream.
          const token = (await context.cookies()).find((c) => c.name === 'sb_session')!.value;
          const bob = { cookie: `sb_session=${token}`, csrf: '' };
          const pageSlot = proxy.served
            .filter((r) => r.path === '/api/stream' && r.cookie.includes(token))
            .at(-1)!.backend;
          const other = 1 - pageSlot;
          const tapper = await tabOn(other, bob);
          tapper.csrf = (await tapper.get('/api/session')).json.csrf;
          const watcher = await streamOn(other, bob.cookie);
          const approve = await until(
            () =>
              [...watcher.rows.values()]
                .flatMap((r) =>
                  r.body?.kind === 'card'
                    ? (r.body.view.buttons.flat() as Array<{ label: string; action: unknown }>)
                    : [],
                )
                .find((x) => x.label.includes('Approve')),
            'the card on the other instance',
          );
          const tapped = await tapper.post('/api/action', { action: approve.action });
          tapper.agent.destroy();
          expect(tapped.status, JSON.stringify(tapped.json)).toBe(200);
          await card.getByText('Approved once by web:bob').waitFor();
          expect(await card.getByRole('button').count()).toBe(0);
          const answer = page.getByRole('article', { name: 'switchboard' }).filter({ hasText: 'Finished write q8' });
          await answer.waitFor();
          expect(await answer.count()).toBe(1);
          await context.close();
          watcher.close();
        } finally {
          await b.close();
        }
      },
      // Chromium starts (seconds on a busy machine) besides the turn.
      60_000,
    );

    it('an instance stopped with pages connected ends their streams, which go on from the other; both exit 0', async () => {
      const onFirst = streams.filter((s) => s.backends.at(-1) === 0);
      expect(onFirst.length).toBeGreaterThan(0);
      const connections = new Map(onFirst.map((s) => [s, s.backends.length]));
      proxy.backends[0] = null;
      expect(await slots[0]!.stop(), 'instance 0').toBe(0);
      slots[0] = null;
      for (const s of onFirst)
        await until(
          () => s.backends.length > connections.get(s)! && s.backends.at(-1) === 1,
          'the page to reconnect to instance 1',
          10_000,
          () => s.backends,
        );
      // A new answer reaches every page, the moved ones too.
      const tab = await tabOn(1);
      expect((await tab.post('/api/send', { thread: 'after-stop', text: 'q9' })).status).toBe(200);
      tab.agent.destroy();
      for (const s of streams) await until(() => answers(s, 'after-stop').includes(answerOf('q9')), 'the answer to q9');
      proxy.backends[1] = null;
      expect(await slots[1]!.stop(), 'instance 1').toBe(0);
      slots[1] = null;
    });
  },
);
