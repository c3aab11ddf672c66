/**
 * Import rules for src/, checked by `npm run lint` and by test/architecture/imports.test.ts.
 * Type-only imports count: a type circle still ties the modules' meanings together.
 * @type {import('dependency-cruiser').IConfiguration}
 */

/**
 * The layers of src/, lowest first (docs/architecture.md, "Layers"): a module imports its own
 * layer and the layers below it, never one above, so no two top-level folders import each other.
 * The first layer is what every folder builds on: the configuration and the plain helpers at the
 * root of src/, and the two folders that import nothing else of src/; the last is the root files
 * that put the program together (`main.ts`, `cli.ts`, `compose.ts`, `doctor.ts`, …).
 * A channel's configuration section (`src/channels/<name>/config.ts`) belongs to the first layer:
 * the configuration composes it (`src/config-sections.ts`), so it may import only zod and
 * `src/config-section.ts` (rule `channel-config-is-plain`).
 */
const BASE_FILES =
  '^src/(errors|log|backoff|metrics|config|config-keys|config-mcp|config-section|config-sections|config-core|config-tools|config-reference)\\.ts$';
const CHANNEL_CONFIG = '^src/channels/[^/]+/config\\.ts$';
const LAYERS = [
  { name: 'base', path: [BASE_FILES, CHANNEL_CONFIG, '^src/(http|demo)/'] },
  { name: 'store', path: ['^src/store/'] },
  { name: 'contract', path: ['^src/contract/'] },
  { name: 'tools', path: ['^src/tools/'] },
  { name: 'delivery', path: ['^src/delivery/'] },
  { name: 'core', path: ['^src/core/'] },
  { name: 'jobs', path: ['^src/jobs/'] },
  { name: 'mcp', path: ['^src/mcp/'] },
  { name: 'kit', path: ['^src/kit/'] },
  { name: 'channels', path: ['^src/channels/'], pathNot: [CHANNEL_CONFIG] },
  { name: 'entry', path: ['^src/[^/]+\\.ts$'], pathNot: [BASE_FILES] },
];

/** One rule per layer: nothing in it imports a layer above it. */
const layerRules = LAYERS.slice(0, -1).map((layer, i) => {
  const above = LAYERS.slice(i + 1);
  return {
    name: `layer-${layer.name}`,
    severity: 'error',
    comment:
      `The ${layer.name} layer imports only itself and the layers below it, not ` +
      `${above.map((l) => l.name).join(', ')} (docs/architecture.md, "Layers").`,
    from: { path: layer.path, ...(layer.pathNot ? { pathNot: layer.pathNot } : {}) },
    to: { path: above.flatMap((l) => l.path), pathNot: i === 0 ? layer.path : BASE_FILES },
  };
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circle anywhere in src/: shared vocabulary belongs in src/contract/.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'contract-is-a-leaf',
      severity: 'error',
      comment: 'src/contract/ imports nothing but itself and store row types.',
      from: { path: '^src/contract/' },
      to: { path: '^src/', pathNot: ['^src/contract/', '^src/store/schema\\.ts$'] },
    },
    {
      name: 'in-a-layer',
      severity: 'error',
      comment: 'Every folder of src/ has a place in LAYERS above (a new folder: add it where it belongs).',
      from: { path: '^src/', pathNot: LAYERS.flatMap((l) => l.path) },
      to: {},
    },
    {
      name: 'channel-config-is-plain',
      severity: 'error',
      comment:
        'A channel\'s config.ts is composed by the configuration (the lowest layer): it imports only zod and ' +
        'src/config-section.ts (docs/new-channel.md).',
      from: { path: CHANNEL_CONFIG },
      to: { pathNot: ['^src/config-section\\.ts$', '(^|/)node_modules/zod/'] },
    },
    {
      name: 'channel-imports-only-the-kit',
      severity: 'error',
      comment:
        'A channel folder src/channels/<name>/ imports only its own files, src/kit/ and npm packages ' +
        '(its SDK): what it needs of the program is exported by src/kit/index.ts (docs/new-channel.md).',
      from: { path: '^src/channels/([^/]+)/', pathNot: [CHANNEL_CONFIG] },
      to: { path: '^src/', pathNot: ['^src/channels/$1/', '^src/kit/'] },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
