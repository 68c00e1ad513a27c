/**
 * Numbered schema migrations, shared by every store. Each store keeps its own list (its SQL
 * dialect differs) and a `schema_migrations` table of the versions applied; this module decides,
 * from the two, what runs next. Never edit an applied migration: append a new one.
 */
export interface Migration {
  /** 1, 2, 3, … with no gap: the order they run in. */
  readonly version: number;
  /** What it changes, for logs and for the operator's `migrate`. */
  readonly description: string;
  readonly sql: string;
}

export class SchemaTooNewError extends Error {
  constructor(
    readonly databaseVersion: number,
    readonly knownVersion: number,
  ) {
    super(
      `the database is at schema version ${databaseVersion}, newer than this server knows (${knownVersion}): ` +
        'run a newer bubble-server',
    );
    this.name = 'SchemaTooNewError';
  }
}

/** The newest version of a list (0 for none). */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations[migrations.length - 1]?.version ?? 0;
}

/**
 * The migrations still to apply, in order. Throws if the list itself is broken (a version out of
 * order or missing) or if the database has a version this list does not know (a newer server
 * migrated it: running older code on it could corrupt it).
 */
export function pendingMigrations(migrations: readonly Migration[], applied: Iterable<number>): Migration[] {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`migration ${index + 1} is numbered ${migration.version}: versions must run 1, 2, 3, …`);
    }
  });
  const done = new Set(applied);
  const newest = Math.max(0, ...done);
  if (newest > latestVersion(migrations)) throw new SchemaTooNewError(newest, latestVersion(migrations));
  return migrations.filter((migration) => !done.has(migration.version));
}
