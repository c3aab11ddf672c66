/**
 * Import rules for src/, checked by `npm run lint` and by test/architecture/imports.test.ts.
 * Type-only imports count: a type circle still ties the modules' meanings together.
 * @type {import('dependency-cruiser').IConfiguration}
 */
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
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
