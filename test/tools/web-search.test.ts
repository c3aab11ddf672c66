import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webSearchTool } from '../../src/tools/builtins/web-search.js';
import { startWebServer, type WebServer } from '../emulators/web.js';
import { makeContext } from './context.js';

let web: WebServer;
beforeAll(async () => {
  web = await startWebServer();
});
afterAll(async () => {
  await web.close();
});

async function run(webSearch: Record<string, unknown>, args: Record<string, unknown>) {
  const ctx = await makeContext({ config: { tools: { web_search: webSearch } } });
  try {
    return await ctx.run(webSearchTool, args);
  } finally {
    await ctx.close();
  }
}

describe('web_search', () => {
  it('says clearly when no backend is configured', async () => {
    const r = await run({}, { query: 'x' });
    expect(r.status).toBe('failed');
    expect(r.output).toContain('web search is not configured');
    const noKey = await run({ backend: 'brave' }, { query: 'x' });
    expect(noKey.output).toContain('api_key is required');
  });

  it('queries SearXNG and caps results at 20', async () => {
    const r = await run({ backend: 'searxng', url: `${web.url}/searxng` }, { query: 'cats', max_results: 20 });
    expect(r.output).toContain('1. Result 1 for cats\n   https://example.com/1\n   snippet 1');
    expect(r.output).toContain('20. Result 20');
    expect(r.output).not.toContain('21. ');
    const dflt = await run({ backend: 'searxng', url: `${web.url}/searxng` }, { query: 'cats' });
    expect(dflt.output.match(/^\d+\. /gm)).toHaveLength(5);
    const tooMany = await run({ backend: 'searxng', url: `${web.url}/searxng` }, { query: 'cats', max_results: 50 });
    expect(tooMany.status).toBe('failed');
  });

  it('queries Tavily and Brave with their keys, normalising results', async () => {
    const t = await run(
      { backend: 'tavily', url: `${web.url}/tavily`, api_key: 'tvly-key' },
      { query: 'dogs', max_results: 2 },
    );
    expect(t.output).toBe(
      '1. T1 dogs\n   https://t.example/1\n   tavily 1\n2. T2 dogs\n   https://t.example/2\n   tavily 2',
    );
    const tavilyReq = web.requests.find((r) => r.path === '/tavily/search');
    expect(tavilyReq?.headers.authorization).toBe('Bearer tvly-key');
    const b = await run({ backend: 'brave', url: `${web.url}/brave`, api_key: 'brave-key' }, { query: 'birds' });
    expect(b.output).toBe('1. Brave one\n   https://b.example/1\n   brave snippet');
    const bad = await run({ backend: 'brave', url: `${web.url}/brave`, api_key: 'wrong' }, { query: 'birds' });
    expect(bad.status).toBe('failed');
    expect(bad.output).toContain('Brave Search answered HTTP 401');
  });
});
