/**
 * The Telegram Bot API emulator in a process of its own, so the times it records are when
 * messages arrive, not when a busy benchmark process gets round to them. Prints
 * `API_ROOT TOKEN` on the first line; answers each `calls` line on stdin with one JSON line of
 * the recorded calls (method, chat, ok, time, whether the text carries a job report mark).
 */
import { createInterface } from 'node:readline';
import { startTelegramEmulator } from '../test/emulators/telegram.js';

const emu = await startTelegramEmulator();
process.stdout.write(`${emu.apiRoot} ${emu.token}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'calls') return;
  const calls = emu.calls.map((c) => ({
    method: c.method,
    chat: String(c.params.chat_id ?? ''),
    ok: c.ok,
    at: c.at,
    report: String(c.params.text ?? '').includes('⏰'),
  }));
  process.stdout.write(`${JSON.stringify(calls)}\n`);
});
process.on('SIGTERM', () => {
  void emu.close().then(() => process.exit(0));
});
