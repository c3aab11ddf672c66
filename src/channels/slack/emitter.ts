/** Slack's emitter: content → mrkdwn sections split within Slack's limits, and Block Kit cards. Pure. */
import type { Token } from 'marked';
import type { Button } from '../../contract/actions.js';
import type { Emitter, Part } from '../../contract/surface.js';
import { cardEmitter } from '../../delivery/cards.js';
import { TITLE_ICON } from '../../delivery/notices.js';
import { buttonBlocks, type CardMessage, SLACK_CARD_LIMITS, viewMessage } from './blocks.js';
import { escapeMrkdwn, tokensToSegments } from './mrkdwn.js';
import { slackLimits, splitForSlack } from './split.js';

function part(message: CardMessage): Part {
  return { body: message, text: message.text };
}

/** The Slack emitter. */
export const slackEmitter: Emitter = {
  markdown(tokens: Token[], title?: string, buttons?: Button[][]): Part[] {
    const segments = tokensToSegments(tokens);
    if (title) segments.unshift({ kind: 'text', text: `${TITLE_ICON} *${escapeMrkdwn(title).replace(/\*/g, '∗')}*` });
    const messages: CardMessage[] = splitForSlack(segments, slackLimits);
    const last = messages.at(-1);
    if (last && buttons?.length)
      messages[messages.length - 1] = { ...last, blocks: [...last.blocks, ...buttonBlocks(buttons)] };
    return messages.map(part);
  },
  ...cardEmitter(SLACK_CARD_LIMITS, (view) => [part(viewMessage(view))]),
};
