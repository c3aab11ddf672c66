/**
 * How one core is put together from its options: the path policy, the model client, access
 * control, leases, the tool catalog, the presenter and the engine's parts, each handed what it
 * needs and nothing more. What goes in (which tools, plugins, sources, services) is chosen by the
 * composition root (`src/compose.ts`, used by `main.ts` and the tests); this file only wires it.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { Presenter } from '../delivery/presenter.js';
import type { Db } from '../store/db.js';
import { deliveryCounts } from '../store/repos/deliveries.js';
import type { PathPolicy } from '../tools/path-policy.js';
import { workspacePolicy } from '../tools/protected-paths.js';
import type { Plugin } from '../tools/plugin.js';
import { StaticToolSource, type ToolSource } from '../tools/source.js';
import type { AnyTool, PromptSection } from '../tools/types.js';
import { type AccessKind, AccessControl } from './access.js';
import { activateTool } from './activate-tool.js';
import { DEFERRED_GROUPS } from './deferred-tools.js';
import { ConversationOps } from './conversation-ops.js';
import { Decisions } from './decisions.js';
import type { EngineDeps } from './deps.js';
import { EventFanout } from './fanout.js';
import { Inbound } from './inbound.js';
import { LatencyClock } from './latency.js';
import { isDeadLocalHolder, Leases, newHolderId } from './leases.js';
import { LlmClient } from './llm.js';
import { Maintenance } from './maintenance.js';
import { type CoreMetrics, createMetrics } from '../metrics.js';
import { questionTool } from './question-tool.js';
import { NameDirectory } from './names.js';
import { Reception } from './reception.js';
import { ChannelRouter } from './routing.js';
import { RunScheduler } from './scheduler.js';
import { planTool, taskTool } from './subagents.js';
import { ToolRegistry } from './tool-registry.js';
import { TurnRunner } from './turn-runner.js';
import { snapshotWorkspaceFile } from '../delivery/sent-files.js';

/** What {@link assembleCore} takes from the core's options: which tools, and this instance's name. */
export interface AssemblyOptions {
  /** Tools besides the question tool (built-ins, extra tools). */
  tools?: AnyTool[];
  plugins?: Plugin[];
  /** Further tool sources (MCP servers), after the built-ins and plugins. */
  sources?: ToolSource[];
  promptSections?: PromptSection[];
  /** This instance's name in lease rows; default: host, pid and a random part. */
  holderId?: string;
  /**
   * Every registered channel kind (`channelKinds` of `channels/registry.ts`, in `defaultToolset`):
   * access decisions read each channel's locality, sign-in, admins and allowed users from it.
   */
  channelKinds: readonly AccessKind[];
}

/** The parts of one core. */
export interface CoreParts {
  metrics: CoreMetrics;
  paths: PathPolicy;
  llm: LlmClient;
  access: AccessControl;
  leases: Leases;
  registry: ToolRegistry;
  presenter: Presenter;
  router: ChannelRouter;
  scheduler: RunScheduler;
  fanout: EventFanout;
  runner: TurnRunner;
  decisions: Decisions;
  maintenance: Maintenance;
  inbound: Inbound;
  reception: Reception;
  ops: ConversationOps;
  /** People's display names (cards, action outcomes). */
  names: NameDirectory;
}

/** The tool catalog: the question tool, sub-agents, built-ins, plugins, outside sources, lazy groups. */
function buildRegistry(
  config: Config,
  options: AssemblyOptions,
  log: Logger,
): { registry: ToolRegistry; sections: PromptSection[] } {
  const registry = new ToolRegistry(log.child({ part: 'tools' }));
  registry.register(questionTool);
  if (config.subagents.max_depth > 0) {
    registry.register(taskTool);
    registry.register(planTool);
  }
  registry.addSource(new StaticToolSource('builtin', options.tools ?? []));
  for (const plugin of options.plugins ?? []) {
    const tools = plugin
      .tools(config)
      .map((tool) => ({ ...tool, meta: { ...tool.meta, source: tool.meta.source ?? `plugin:${plugin.name}` } }));
    registry.addSource(new StaticToolSource(`plugin:${plugin.name}`, tools));
  }
  for (const source of options.sources ?? []) registry.addSource(source);
  const sections = [...(options.promptSections ?? [])];
  for (const source of options.sources ?? []) if (source.promptSection) sections.push(source.promptSection);
  if (config.tools.deferred) registry.defer(DEFERRED_GROUPS);
  // The lazy groups' line in the system prompt is written per round by the turn runner.
  if (registry.lazyGroups().length > 0) registry.register(activateTool(registry));
  return { registry, sections };
}

/** Build every part of a core over an open, migrated database. */
export function assembleCore(config: Config, db: Db, log: Logger, options: AssemblyOptions): CoreParts {
  const metrics = createMetrics();
  const latency = new LatencyClock(metrics.messageLatency);
  const paths = workspacePolicy(config);
  const llm = new LlmClient(config, log.child({ part: 'llm' }));
  const access = new AccessControl(db, config, options.channelKinds);
  const leases = new Leases(
    db,
    options.holderId ?? newHolderId(),
    config.store.lease_seconds * 1000,
    metrics,
    log.child({ part: 'leases' }),
  );
  const router = new ChannelRouter(db);
  const emit: EngineDeps['emit'] = (id, event) => fanout.emit(id, event);
  let runner: TurnRunner | undefined;
  const scheduler = new RunScheduler({
    db,
    databaseUrl: config.store.database_url,
    leases,
    router,
    runner: () => runner!,
    emit,
    log,
  });
  const presenter = new Presenter({
    db,
    log: log.child({ part: 'delivery' }),
    metrics,
    abandonAfterMs: config.delivery.abandon_after_seconds * 1000,
    conversation: (id) => router.conversation(id),
    channelFor: (conv) => router.channelFor(conv),
    claims: { holder: leases.holder, ttlMs: config.store.lease_seconds * 1000, holderGone: isDeadLocalHolder },
    snapshotLegacy: async (file) => (await snapshotWorkspaceFile(db, paths, file)).id,
    onShown: (id, final) => {
      latency.mark(id, 'first_shown');
      if (final) latency.mark(id, 'final_shown');
    },
  });
  metrics.bindDeliveryCounts(() => deliveryCounts(db));
  const fanout = new EventFanout(router, presenter, latency, log);
  const { registry, sections } = buildRegistry(config, options, log);
  registry.onChange(() => {
    if (!scheduler.closing) registry.recordKnown(db).catch((err) => log.warn({ err }, 'recording known tools failed'));
  });
  const deps: EngineDeps = {
    db,
    config,
    log,
    llm,
    registry,
    paths,
    metrics,
    latency,
    promptSections: sections,
    emit,
    conversation: (id) => router.conversation(id),
    chatOf: (conv) => router.chatOf(conv),
    channelFor: (conv) => router.channelForChat(conv),
    wake: (id) => scheduler.wake(id),
    deliver: (id) => presenter.deliver(id),
    sendFile: async (conv, callId, file) => presenter.sendFile(await router.chatOf(conv), callId, file),
    isClosing: () => scheduler.closing,
    isAdmin: (principal) => access.isAdmin(principal),
    isLocal: (channel) => access.isLocal(channel),
    holder: leases.holder,
  };
  runner = new TurnRunner(deps);
  const turns = runner;
  // A stop aborts the turn here and, through the bus, on the instance running it (PostgreSQL).
  const decisions = new Decisions(deps, access, (id) => {
    turns.abort(id);
    scheduler.announceStop(id);
  });
  const maintenance = new Maintenance({
    db,
    router,
    scheduler,
    presenter,
    decisions,
    emit,
    log,
    holder: leases.holder,
  });
  const names = new NameDirectory({ db, log });
  const inbound = new Inbound({ db, access, latency, router, scheduler, runner, decisions });
  const reception = new Reception({
    db,
    config,
    access,
    inbound,
    router,
    presenter,
    names,
    transcribe: (audio) => llm.transcribe(audio),
    paths,
    log,
  });
  const ops = new ConversationOps({ db, config, access, decisions, listModels: () => llm.listModels() });
  return {
    metrics,
    paths,
    llm,
    access,
    leases,
    registry,
    presenter,
    router,
    scheduler,
    fanout,
    runner,
    decisions,
    maintenance,
    inbound,
    reception,
    ops,
    names,
  };
}
