/**
 * Vitest setup file, run before every test file — also where a worker's files share their modules
 * (`isolate: false`), so that each file starts as it would in a fresh process:
 * - the test tools' execution counts and latch start from zero (`test/helpers/test-tools.ts`:
 *   files assert "ran exactly once" on them);
 * - on the PostgreSQL half, the file's own database with its batch of schemas
 *   (`test/helpers/test-db.ts`), dropped after the file. Nothing to do for it on SQLite.
 */
import { afterAll } from 'vitest';
import { beginFileDatabase, testPostgresUrl } from '../helpers/test-db.js';
import { resetTestTools } from '../helpers/test-tools.js';

resetTestTools();
if (testPostgresUrl) afterAll(await beginFileDatabase(testPostgresUrl));
