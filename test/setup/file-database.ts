/**
 * Vitest setup file, run before every test file (also where a worker's files share their
 * modules): on the PostgreSQL half, the file's own database with its batch of schemas
 * (`test/helpers/test-db.ts`), dropped after the file. Does nothing on SQLite.
 */
import { afterAll } from 'vitest';
import { beginFileDatabase, testPostgresUrl } from '../helpers/test-db.js';

if (testPostgresUrl) afterAll(await beginFileDatabase(testPostgresUrl));
