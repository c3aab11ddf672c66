/**
 * Chaos run of the delivery ledger (`node --import tsx bench/chaos.ts`): 20 Telegram chats each
 * ask 8 questions (one needs an approval tap), waiting for each answer as a person would, while
 * `switchboard start` (a child process over one SQLite file) is SIGKILLed at random moments at
 * least 10 times and restarted; then a storm of 429s (30 % of sends and edits, `retry_after` 1 s)
 * while the last two questions of every chat are answered. Prints answers lost, doubled, fragments left, approvals
 * resolved, how every approval card ended (settled, or still offering buttons for something decided), kills
 * and the time taken. Options: CHAOS_CHATS, CHAOS_MESSAGES, CHAOS_KILLS, CHAOS_SEED,
 * CHAOS_ANSWER_TIMEOUT_MS; CHAOS_DEBUG=1 prints the chat of every doubled or missing answer.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startScriptedLlm } from '../test/emulators/llm.js';
import { startTelegramEmulator, type TelegramEmulator } from '../test/emulators/telegram.js';
import { type StartedProcess, startProcess, writeConfig } from '../test/helpers/child-start.js';
import { answerFor, scriptedModel } from '../test/helpers/kill-model.js';
import { decodeCallback } from '../src/channels/telegram/callback-data.js';
import { openSqlite } from '../src/store/db.js';

const CHATS = Number(process.env.CHAOS_CHATS ?? 20);
const MESSAGES = Number(process.env.CHAOS_MESSAGES ?? 8);
const KILLS = Number(process.env.CHAOS_KILLS ?? 12);
/** A person gives up on an answer after this long (it counts as lost). */
const ANSWER_TIMEOUT_MS = Number(process.env.CHAOS_ANSWER_TIMEOUT_MS ?? 120_000);

function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}
const random = seeded(Number(process.env.CHAOS_SEED ?? 7));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function question(chat: number, n: number): string {
  // The fifth question of every chat runs bash, which needs an approval tap.
  return n === 5 ? `approve c${chat} m${n}` : `c${chat} m${n}`;
}

/** Tap Approve on every card of a chat that still shows buttons (pre-crash copies included). */
function tapOpenCards(emu: TelegramEmulator, chatId: number, tapped: Set<string>): void {
  for (const m of emu.messages(chatId)) {
    // Message ids are per chat on Telegram.
    const key = `${chatId}:${m.message_id}`;
    if (tapped.has(key) || !m.plain.includes('Approval needed')) continue;
    const approve = (m.reply_markup?.inline_keyboard ?? [])
      .flat()
      .find((b: { text: string }) => b.text.includes('Approve'));
    if (!approve) continue;
    tapped.add(key);
    emu.tap({ id: chatId, first_name: `U${chatId}` }, chatId, m.message_id, approve.callback_data);
  }
}

/** How the approval cards of the chats ended (see {@link cardCounts}). */
interface CardCounts {
  /** No buttons, and the outcome names who decided. */
  settled: number;
  /** Buttons still offered for an approval that is decided (or expired, cancelled). */
  unsettled: number;
  /** No buttons, but nobody named. */
  anonymous: number;
  /** Buttons still offered for an approval still waiting (a person gave up on the answer first). */
  waiting: number;
}

/**
 * Every approval card message of the chats once all was answered, judged against its approval's
 * row in the database (the approval id is read from the card's buttons).
 */
async function cardCounts(emu: TelegramEmulator, users: number[], dbFile: string): Promise<CardCounts> {
  const out: CardCounts = { settled: 0, unsettled: 0, anonymous: 0, waiting: 0 };
  const db = openSqlite(dbFile);
  try {
    for (const chatId of users) {
      for (const m of emu.messages(chatId)) {
        const texts = [m.plain, ...m.history];
        if (!texts.some((t) => t.includes('Approval needed') || t.includes('Approved'))) continue;
        const buttons: Array<{ callback_data: string }> = (m.reply_markup?.inline_keyboard ?? []).flat();
        if (buttons.length === 0) {
          if (/Approved .* by /.test(m.plain)) out.settled++;
          else out.anonymous++;
          continue;
        }
        const action = decodeCallback(buttons[0]?.callback_data);
        const id = action?.kind === 'approval' ? action.id : '';
        const row = await db.selectFrom('approvals').select('status').where('id', '=', id).executeTakeFirst();
        if (row?.status === 'pending' || row?.status === 'awaiting_note') out.waiting++;
        else out.unsettled++;
      }
    }
  } finally {
    await db.destroy();
  }
  return out;
}

export async function run(): Promise<void> {
  const live: StartedProcess[] = [];
  try {
    await chaos(live);
  } finally {
    // Never leave a child behind, whatever failed.
    for (const p of live) if (p.child.exitCode === null && p.child.signalCode === null) await p.kill();
  }
}

async function chaos(live: StartedProcess[]): Promise<void> {
  const emu = await startTelegramEmulator();
  const llm = await startScriptedLlm();
  llm.setHandler(scriptedModel);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sb-chaos-'));
  mkdirSync(path.join(dir, 'ws'));
  const users = Array.from({ length: CHATS }, (_, i) => 3001 + i);
  const env = {
    SWITCHBOARD_CONFIG: writeConfig(dir, '[telegram]\nstream_interval_ms = 200\n\n[approvals]\ntimeout_seconds = 0\n'),
    TELEGRAM_BOT_TOKEN: emu.token,
    TELEGRAM_API_ROOT: emu.apiRoot,
    TELEGRAM_ALLOWED_USERS: users.join(','),
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: 'bench-key',
    SWITCHBOARD_MODEL: 'bench-model',
    DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}`,
    SWITCHBOARD_WORKSPACE: path.join(dir, 'ws'),
  };
  const started = Date.now();
  const launch = async () => {
    const p = await startProcess(env, 60_000);
    live.push(p);
    return p;
  };
  let proc: StartedProcess = await launch();
  let kills = 0;
  const logs: Array<{ at: number; kill: number }> = [];
  let stormOn = false;
  const tapped = new Set<string>();
  let approvalsAsked = 0;

  const answers = (chatId: number) =>
    emu.messages(chatId).filter((m) => m.kind === 'text' && m.plain.startsWith('Answ'));

  // The last questions are asked during the 429 storm, once the kills are over.
  const stormFrom = Math.max(1, MESSAGES - 1);
  let openGate: () => void = () => undefined;
  const stormGate = new Promise<void>((resolve) => {
    openGate = resolve;
  });
  // A person per chat: ask, wait for the complete answer (tapping approvals), ask the next.
  const people = users.map(async (chatId, index) => {
    await sleep(index * 50);
    for (let n = 1; n <= MESSAGES; n++) {
      if (n === stormFrom) await stormGate;
      const q = question(chatId, n);
      if (n === 5) approvalsAsked++;
      emu.sendText({ id: chatId, first_name: `U${chatId}` }, q);
      const deadline = Date.now() + ANSWER_TIMEOUT_MS;
      while (Date.now() < deadline && !answers(chatId).some((m) => m.plain === answerFor(q))) {
        tapOpenCards(emu, chatId, tapped);
        await sleep(100);
      }
      if (process.env.CHAOS_DEBUG && !answers(chatId).some((m) => m.plain === answerFor(q))) {
        console.error(
          `chat ${chatId}: no answer to ${q}; chat shows ${JSON.stringify(emu.messages(chatId).map((m) => m.plain.slice(0, 60)))}`,
        );
      }
      // A person reads the answer and thinks before the next question.
      await sleep(1_000 + random() * 3_000);
    }
  });
  // The killer: SIGKILL at a random moment, restart at once, until enough kills; then the storm.
  while (kills < KILLS) {
    await sleep(1_000 + random() * 2_000);
    await proc.kill();
    kills++;
    logs.push({ at: Date.now() - started, kill: kills });
    proc = await launch();
  }
  stormOn = true;
  const stormRandom = seeded(99);
  emu.failRate('sendMessage', 0.3, { status: 429, retryAfter: 1 }, stormRandom);
  emu.failRate('editMessageText', 0.3, { status: 429, retryAfter: 1 }, stormRandom);
  openGate();
  await Promise.all(people);
  // Let the last edits land, then judge.
  await sleep(3_000);
  emu.failRate('sendMessage', 0, { status: 429 });
  emu.failRate('editMessageText', 0, { status: 429 });
  await sleep(2_000);
  const rateLimited = emu.calls.filter(
    (c) => !c.ok && (c.method === 'sendMessage' || c.method === 'editMessageText'),
  ).length;
  await proc.stop();

  let lost = 0;
  let doubled = 0;
  let fragments = 0;
  let outOfOrder = 0;
  for (const chatId of users) {
    const expected = Array.from({ length: MESSAGES }, (_, i) => answerFor(question(chatId, i + 1)));
    const shown = answers(chatId).map((m) => m.plain);
    for (const a of expected) {
      const copies = shown.filter((s) => s === a).length;
      if (copies === 0) lost++;
      if (copies > 1) {
        doubled += copies - 1;
        const ids = answers(chatId)
          .filter((m) => m.plain === a)
          .map((m) => m.message_id);
        console.error(`chat ${chatId}: "${a.slice(0, 24)}…" shown ${copies} times (message ids ${ids.join(', ')})`);
        if (process.env.CHAOS_DEBUG) {
          for (const m of emu.messages(chatId))
            console.error(`  ${m.message_id}: ${m.plain.slice(0, 50).replace(/\n/g, ' ')} | edits ${m.history.length}`);
          console.error(
            `  calls: ${JSON.stringify(emu.calls.filter((c) => Number(c.params.chat_id) === chatId && c.method !== 'sendChatAction').map((c) => [c.method, c.ok, c.params.message_id ?? '', String(c.params.text ?? '').slice(0, 20)]))}`,
          );
          console.error(`  process log: ${JSON.stringify(logs.filter((l) => l.at > 0))}`);
        }
      }
    }
    fragments += shown.filter((s) => !expected.includes(s)).length;
    const order = shown.filter((s) => expected.includes(s)).map((s) => expected.indexOf(s));
    if (order.some((v, i) => i > 0 && v < (order[i - 1] ?? 0))) outOfOrder++;
  }
  const cards = await cardCounts(emu, users, path.join(dir, 'db.sqlite'));
  const resolved = users.filter((chatId) =>
    answers(chatId).some((m) => m.plain === answerFor(question(chatId, 5))),
  ).length;
  console.log(
    [
      `chaos: ${CHATS} chats x ${MESSAGES} messages, ${kills} SIGKILLs, then a 30 % 429 storm (${rateLimited} calls answered 429, storm ${stormOn ? 'on' : 'off'})`,
      `  answers lost:       ${lost} of ${CHATS * MESSAGES}`,
      `  answers doubled:    ${doubled}`,
      `  fragments left:     ${fragments}`,
      `  chats out of order: ${outOfOrder}`,
      `  approvals resolved: ${resolved} of ${approvalsAsked} (${tapped.size} cards tapped)`,
      `  approval cards:     ${cards.settled} settled (no buttons, naming who decided), ${cards.unsettled} decided but still with buttons, ${cards.anonymous} without who decided, ${cards.waiting} still asking (not decided)`,
      `  time:               ${((Date.now() - started) / 1000).toFixed(1)} s`,
    ].join('\n'),
  );
  await emu.close();
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
  if (lost || doubled || fragments || cards.unsettled || cards.anonymous) process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
