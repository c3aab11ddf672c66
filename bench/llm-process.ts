/**
 * The scripted model server in a process of its own, so a benchmark's numbers are not slowed by
 * the emulator sharing the measured process's event loop. Prints its URL on the first line.
 */
import { startScriptedLlm } from '../test/emulators/llm.js';

// Loopback keep-alive as a real endpoint keeps it: with a 1 s idle timeout, a client reusing a socket
// the server is closing at that moment sees "other side closed" under load.
const llm = await startScriptedLlm({ keepAliveTimeoutMs: 60_000 });
// 39 characters in chunks of 16: a three-chunk stream. Requests are not kept (long runs).
llm.setHandler(() => {
  llm.requests.length = 0;
  return { text: 'Benchmark reply with a few words in it.', chunkSize: 16 };
});
process.stdout.write(`${llm.url}\n`);
process.on('SIGTERM', () => {
  void llm.close().then(() => process.exit(0));
});
