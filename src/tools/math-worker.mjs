/**
 * Worker thread for the `math` tool: evaluates expressions with mathjs, its unsafe functions
 * (import, createUnit, evaluate, parse, simplify, derivative, reviver, resolve, compile) removed
 * from the expression scope, as the mathjs security notes advise. The parent enforces the time
 * limit by terminating this worker; plain JS (.mjs) so it loads without a TypeScript loader.
 */
import { parentPort } from 'node:worker_threads';
import { all, create } from 'mathjs';

const math = create(all);
const limitedEvaluate = math.evaluate;
const disabled = (name) => () => {
  throw new Error(`function ${name} is disabled`);
};
math.import(
  Object.fromEntries(
    ['import', 'createUnit', 'evaluate', 'parse', 'simplify', 'derivative', 'reviver', 'resolve', 'compile'].map(
      (n) => [n, disabled(n)],
    ),
  ),
  { override: true },
);

function format(value) {
  if (value && typeof value === 'object' && value.isResultSet) {
    return value.entries.map((v) => format(v)).join('\n');
  }
  if (typeof value === 'function') return `function ${value.syntax ?? value.name ?? ''}`.trim();
  if (value === undefined) return 'undefined';
  return math.format(value, { precision: 14 });
}

parentPort.postMessage({ ready: true });

parentPort.on('message', ({ id, expression }) => {
  try {
    const scope = new Map();
    const result = limitedEvaluate(expression, scope);
    parentPort.postMessage({ id, ok: true, result: format(result) });
  } catch (err) {
    parentPort.postMessage({ id, ok: false, error: err instanceof Error ? err.message : String(err) });
  }
});
