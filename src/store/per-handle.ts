/** State kept in memory per database handle (a cache of what that database holds). */
import type { Db } from './db.js';

/**
 * An accessor that gives each database handle its own instance, made by `create` on first use
 * and dropped with the handle (tests open many databases in one process).
 */
export function perHandle<T>(create: (db: Db) => T): (db: Db) => T {
  const instances = new WeakMap<Db, T>();
  return (db) => {
    let instance = instances.get(db);
    if (instance === undefined) {
      instance = create(db);
      instances.set(db, instance);
    }
    return instance;
  };
}
