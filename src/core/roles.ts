/**
 * The role objects the core hands out: a channel gets a {@link ChannelCore}, a chat command a
 * {@link CommandCore}, a button's action an {@link ActionCore}, each built here from the core's
 * parts with only its members, so that code cannot reach the rest of the core.
 * `core.command(...)` and `core.act(...)` run the last two.
 */
import type { ElectedWork, Election, JobControls, Memo, PeopleNames } from '../contract/core.js';
import type { ActionCore, ChannelCore, CommandCore } from '../contract/roles.js';
import { getQuestion } from '../store/repos/approvals.js';
import * as convRepo from '../store/repos/conversations.js';
import * as journalRepo from '../store/repos/inbound-journal.js';
import { keyOf } from './conversation-ops.js';
import type { CoreParts } from './assembly.js';
import type { Db } from '../store/db.js';
import { compactChat, usageOf } from './model-commands.js';
import type { Config } from '../config.js';
import type { SourceStatus } from '../tools/source.js';
import { approvePairing } from './pairing-request.js';
import type { Logger } from 'pino';
import type { ChatRef } from '../contract/chat.js';
import type { NoticeContent, TextContent } from '../contract/content.js';

/** What the roles are built from: the core's parts and what the core itself holds. */
export interface RoleSources {
  parts: CoreParts;
  db: Db;
  config: Config;
  log: Logger;
  names: PeopleNames;
  /** Read at each use: the job service attaches after the core is built. */
  jobs(): JobControls | undefined;
  toolSources(): SourceStatus[];
  say(ref: ChatRef, key: string, content: TextContent | NoticeContent): Promise<void>;
  memo(name: string): Memo;
  elect(name: string, work: ElectedWork): Promise<Election>;
}

/** The role of a channel; `command` and `act` are the core's own (they run the other two roles). */
export function channelCore(
  s: RoleSources,
  ways: Pick<ChannelCore, 'command' | 'act'>,
  mayUse: (principal: string) => Promise<boolean>,
): ChannelCore {
  const { reception, ops, router } = s.parts;
  const { db } = s;
  return {
    receive: (message) => reception.receive(message),
    command: (name, args, place) => ways.command(name, args, place),
    act: (action, by, tap) => ways.act(action, by, tap),
    say: s.say,
    names: s.names,
    mayUse,
    markInboundSeen: (key) => convRepo.markInboundSeen(db, key),
    chats: {
      find: (ref) => convRepo.findActiveConversation(db, keyOf(ref)),
      get: (id) => router.conversation(id),
      latest: (channel, chatKey) => convRepo.latestConversation(db, channel, chatKey),
      status: (ref) => ops.status(ref),
      stop: (ref, by) => ops.stop(ref, by),
      newConversation: (ref, by) => ops.newConversation(ref, by),
    },
    store: {
      memo: s.memo,
      journal: {
        journalUpdates: (source, updates) => journalRepo.journalUpdates(db, source, updates),
        forgetUpdates: (source, ids) => journalRepo.forgetUpdates(db, source, ids),
        journaledUpdates: (source) => journalRepo.journaledUpdates(db, source),
      },
      elect: s.elect,
    },
    admin: {
      rules: { list: (by) => ops.listRules(by), revoke: (id, by) => ops.revokeRule(id, by) },
      get jobs() {
        return s.jobs();
      },
      toolSources: () => s.toolSources(),
    },
  };
}

/** The role of a chat command (the table in `commands.ts`). */
export function commandCore(s: RoleSources): CommandCore {
  const { ops, runner, presenter } = s.parts;
  const { db } = s;
  return {
    stop: (ref, by) => ops.stop(ref, by),
    newConversation: (ref, by) => ops.newConversation(ref, by),
    status: (ref) => ops.status(ref),
    compact: (ref, by) =>
      compactChat(
        { db, config: s.config, compactor: runner.compactor, deliver: (id) => presenter.deliver(id) },
        ref,
        by,
      ),
    usage: (by) => usageOf({ db, config: s.config }, by),
    setModel: (ref, model) => ops.setModel(ref, model),
    rules: { list: (by) => ops.listRules(by), revoke: (id, by) => ops.revokeRule(id, by) },
    get jobs() {
      return s.jobs();
    },
    toolSources: () => s.toolSources(),
    receive: (message) => s.parts.reception.receive(message),
  };
}

/** The role of a button's action (the router in `actions.ts`). */
export function actionCore(s: RoleSources): ActionCore {
  const { access, maintenance, router, ops } = s.parts;
  const { db } = s;
  return {
    names: s.names,
    // A tap is on the card itself; a terminal's typed decision says `within` (checked there).
    decide: (input) => ops.decideApproval(input),
    question: (id) => getQuestion(db, id),
    answer: (input) => ops.answerQuestion(input),
    isAdmin: (principal) => access.isAdmin(principal),
    approvePairing: (code, by) =>
      approvePairing(
        {
          access,
          welcome: () => maintenance.welcome(),
          channels: () => router.list(),
          say: s.say,
          names: s.names,
          log: s.log,
        },
        code,
        by,
      ),
    get jobs() {
      return s.jobs();
    },
    redraw: (tapped, content) => s.parts.reception.redraw(tapped, content),
  };
}
