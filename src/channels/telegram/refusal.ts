/**
 * How a Bot API server refuses what it does not take: a method or a payload it does not know (a
 * self-hosted `telegram-bot-api` lagging behind), the one test behind every fallback of the
 * channel (drafts, rich messages) and `doctor`'s report of them; and HTML it cannot parse (the
 * same text then goes as plain text).
 */
import { GrammyError } from 'grammy';

/** Telegram's answer to a method or payload it does not know (404 "Not Found", 400 "… not supported"). */
export function unknownToServer(code: number, description = ''): boolean {
  return (
    code === 404 ||
    (code === 400 && /method not found|unknown method|not (?:supported|implemented)|unsupported/i.test(description))
  );
}

/** Telegram's answer to HTML it cannot parse ("can't parse entities"). */
export function isEntityError(err: unknown): boolean {
  return err instanceof GrammyError && err.error_code === 400 && /can't parse entities/i.test(err.description);
}
