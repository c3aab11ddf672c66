/**
 * How a Bot API server says it does not know a method or a payload (a self-hosted
 * `telegram-bot-api` lagging behind): the one test behind every fallback of the channel (drafts,
 * rich messages) and `doctor`'s report of them.
 */

/** Telegram's answer to a method or payload it does not know (404 "Not Found", 400 "… not supported"). */
export function unknownToServer(code: number, description = ''): boolean {
  return (
    code === 404 ||
    (code === 400 && /method not found|unknown method|not (?:supported|implemented)|unsupported/i.test(description))
  );
}
