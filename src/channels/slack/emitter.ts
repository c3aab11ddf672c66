/**
 * Slack's emitter: delivery content → messages of mrkdwn section blocks (split within Slack's
 * limits) and Block Kit cards. Pure, so the wording is tested without a workspace.
 */
import type { Token } from 'marked';
import type { Button } from '../../contract/actions.js';
import type { ApprovalContent, NoticeContent, QuestionContent, ToolContent } from '../../contract/content.js';
import type { Emitter, Part } from '../../contract/surface.js';
import { approvalCard, approvalOutcome, type CardMessage, outputTail, questionCard, questionOutcome, toolLine } from './blocks.js';
import { escapeMrkdwn, tokensToSegments } from './mrkdwn.js';
import { buttonBlocks } from './codec.js';
import { slackLimits, splitForSlack } from './split.js';

function part(message: CardMessage): Part {
  return { body: message, text: message.text };
}

function section(text: string): CardMessage {
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
}

/** The Slack emitter. */
export const slackEmitter: Emitter = {
  markdown(tokens: Token[], title?: string, buttons?: Button[][]): Part[] {
    const segments = tokensToSegments(tokens);
    if (title) segments.unshift({ kind: 'text', text: `:bell: *${escapeMrkdwn(title).replace(/\*/g, '∗')}*` });
    const messages: CardMessage[] = splitForSlack(segments, slackLimits);
    const last = messages.at(-1);
    if (last && buttons?.length) messages[messages.length - 1] = { ...last, blocks: [...last.blocks, ...buttonBlocks(buttons)] };
    return messages.map(part);
  },
  notice(c: NoticeContent): Part[] {
    return [part(section(`${c.level === 'error' ? ':warning:' : ':information_source:'} ${escapeMrkdwn(c.text)}`))];
  },
  approval(c: ApprovalContent): Part[] {
    return [part(c.state === 'pending' ? approvalCard(c) : approvalOutcome(c))];
  },
  question(c: QuestionContent): Part[] {
    return [part(c.state === 'pending' ? questionCard(c) : questionOutcome(c))];
  },
  tool(c: ToolContent, tail?: string): Part[] {
    if (c.state === 'running') return [part(toolLine(c.label, undefined, undefined, tail ? outputTail(tail) : undefined))];
    return [part(toolLine(c.label, c.state, c.summary))];
  },
};
