/**
 * The floor for `bench/telegram.ts`: a bare grammY bot doing the same job as switchboard with
 * nothing else — long polling through @grammyjs/runner (ordered per chat), a streamed completion
 * from the same OpenAI-compatible endpoint through the openai SDK, one sendMessage of the answer.
 * No database, no history, no tools. Plain JavaScript, so no TypeScript loader is in its figures.
 * Env: TELEGRAM_BOT_TOKEN, TELEGRAM_API_ROOT, OPENAI_BASE_URL. Prints "ready" once polling.
 */
import { run, sequentialize } from '@grammyjs/runner';
import { Bot } from 'grammy';
import OpenAI from 'openai';

const bot = new Bot(process.env.TELEGRAM_BOT_TOKEN, { client: { apiRoot: process.env.TELEGRAM_API_ROOT } });
// Retries as switchboard's default (llm.max_retries = 3), so both sides survive the same hiccups.
const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: 'bench', maxRetries: 3 });

bot.use(sequentialize((ctx) => String(ctx.chat?.id ?? '')));
bot.on('message:text', async (ctx) => {
  const stream = await openai.chat.completions.create({
    model: 'bench',
    stream: true,
    messages: [{ role: 'user', content: ctx.message.text }],
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  await ctx.reply(text);
});

bot.catch((err) => process.stderr.write(`bare bot: ${err.error?.message ?? err.message}\n`));

await bot.init();
const runner = run(bot, { runner: { fetch: { timeout: 30 }, silent: true } });
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void runner.stop().then(() => process.exit(0));
});
