import { basename, dirname, isAbsolute, normalize, relative, resolve, sep } from 'node:path';
import type { Options } from '@anthropic-ai/claude-agent-sdk';
import { CREDENTIAL_ENV_VARS } from './child-env.js';

/**
 * What a bot's tools may reach. Claude Code runs every Bash command of a
 * sandboxed session inside bubblewrap (engine-notes §8): its own pid namespace
 * (so no parent's `/proc/<pid>/environ`), no network, writes only in the
 * working directory. Reads are an allow-list (README, "The sandbox"): `/` is
 * denied, and only the system folders, the toolchains, `readPaths` and the
 * thread's workspace are opened again; the system's secrets and the bot's
 * private files are denied inside those. The file tools (Read, Edit, Glob,
 * Grep) are held to the workspace by permission rules.
 */
export type ToolIsolation =
  /**
   * Commands run in Claude Code's sandbox; `privatePaths` are out of every tool's reach, and
   * commands may read only the system folders, `readPaths` (the toolchains, an owner's extra
   * folders) and the thread's workspace.
   */
  | { readonly kind: 'sandbox'; readonly privatePaths: readonly string[]; readonly readPaths?: readonly string[] }
  /** The sandbox cannot start here: the session runs no built-in tools at all. */
  | { readonly kind: 'unavailable'; readonly reason: string }
  /** The owner turned the sandbox off (`claude.sandbox: false`): tools run as the bot's own user. */
  | { readonly kind: 'off' };

/** The folders every sandboxed command may read: programs, libraries and the system's configuration. */
export const SYSTEM_READ_PATHS: readonly string[] = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
];

/**
 * What stays denied inside the system folders: password hashes, host keys, TLS keys, sudo rules,
 * systemd credentials, and the folder the documented deployment keeps every bot's config in.
 */
export const SYSTEM_SECRET_PATHS: readonly string[] = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/ssh',
  '/etc/ssl/private',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/security/opasswd',
  '/etc/credstore',
  '/etc/credstore.encrypted',
  '/etc/bubble',
];

/**
 * The toolchain folders a sandboxed command must read to run its programs:
 * every absolute entry of the child's PATH, and the installation Node runs
 * from (the parent of its `bin`, so its own `lib` comes along). Relative
 * entries (`.`, empty) and `/` itself are left out. Pure.
 */
export function toolchainReadPaths(childPath: string, execPath: string): string[] {
  const fromPath = childPath
    .split(':')
    .filter((entry) => isAbsolute(entry))
    .map((entry) => normalize(entry).replace(/(.)\/+$/, '$1'));
  const binDir = dirname(execPath);
  const node = basename(binDir) === 'bin' ? dirname(binDir) : binDir;
  return [...new Set([...fromPath, ...(isAbsolute(execPath) ? [node] : [])])].filter((p) => p !== '/');
}

/** The options of one query that carry its isolation. Pure. */
export function isolationOptions(isolation: ToolIsolation, cwd: string, tmpDir?: string): IsolationOptions {
  switch (isolation.kind) {
    case 'off':
      return {};
    case 'unavailable':
      // No Bash, no file tools, no sub-agents: nothing that could run unsandboxed.
      return { tools: [] };
    case 'sandbox': {
      const privatePaths = [...new Set(isolation.privatePaths.map((p) => resolve(p)))].sort();
      // A private path that holds the workspace (the workspace root, a home with the bot in it)
      // cannot be a deny rule, which would shut the workspace too: the sandbox re-opens the
      // workspace inside it for commands, and the bot's own canUseTool refuses the file tools
      // (they ask there for any path outside the workspace).
      // Likewise one that holds the CLI's temp folder: an Edit deny rule is also a sandbox write denial, and the
      // CLI's shell writes its state there after every command.
      const ruled = privatePaths.filter((p) => !isInside(cwd, p) && !(tmpDir !== undefined && isInside(tmpDir, p)));
      // Re-opened for reading: a path given to allowRead wins over a denial around it, so nothing that lies in a
      // private path (a PATH entry in the bot's home, say) is opened again, except the workspace itself.
      const opened = [...SYSTEM_READ_PATHS, ...(isolation.readPaths ?? [])]
        .map((p) => resolve(p))
        .filter((p) => p !== '/' && !privatePaths.some((dir) => isInside(p, dir)))
        // One inside another opened folder adds nothing (`/usr/local/bin` in `/usr`).
        .filter((p, _i, all) => !all.some((other) => other !== p && isInside(p, other)));
      const denyRead = [...new Set(['/', ...SYSTEM_SECRET_PATHS, ...privatePaths])].sort();
      return {
        sandbox: {
          enabled: true,
          failIfUnavailable: true,
          autoAllowBashIfSandboxed: false,
          allowUnsandboxedCommands: false,
          filesystem: { denyRead, allowRead: [...new Set([...opened, cwd])].sort() },
          credentials: { envVars: CREDENTIAL_ENV_VARS.map((name) => ({ name, mode: 'deny' as const })) },
        },
        settings: {
          permissions: {
            deny: [
              ...ruled.flatMap((p) => [`Read(/${p}/**)`, `Read(/${p})`, `Edit(/${p}/**)`, `Edit(/${p})`]),
              'Read(//proc/**)',
            ],
            // The file tools (Read, Grep, Glob, LSP) read only the workspace, in every permission mode; a command
            // that names a path outside it is asked about even under bypassPermissions (engine-notes §8).
            blockReadsOutsideWorkingDirectories: true,
            blockWritesOutsideWorkingDirectories: true,
          },
        },
      };
    }
  }
}

/** What isolation puts in a query's options. */
export type IsolationOptions = Pick<Options, 'sandbox' | 'settings' | 'tools'>;

/**
 * The isolation a spare CLI starts with, before it knows its thread: only what
 * every workspace under `workspaceRoot` shares, with no workspace opened. A
 * claim can add rules and paths but never take one given at start-up away
 * (measured with CLI 2.1.332), so nothing here may be missing from any
 * thread's own isolation (`spareIsolationGap` checks). Pure.
 */
export function spareIsolationOptions(
  isolation: ToolIsolation,
  workspaceRoot: string,
  tmpDir: string,
): IsolationOptions {
  const root = resolve(workspaceRoot);
  const options = isolationOptions(isolation, root, tmpDir);
  const filesystem = options.sandbox?.filesystem;
  if (filesystem) filesystem.allowRead = (filesystem.allowRead ?? []).filter((p) => p !== root);
  return options;
}

/**
 * A thread's isolation as a flag-settings overlay, for a claimed spare: its
 * `sandbox` and `permissions` keys replace the spare's whole. Pure.
 */
export function isolationSettings(
  isolation: ToolIsolation,
  cwd: string,
  tmpDir: string | undefined,
): { sandbox?: NonNullable<Options['sandbox']>; permissions?: Record<string, unknown> } {
  const options = isolationOptions(isolation, cwd, tmpDir);
  const permissions = (options.settings as { permissions?: Record<string, unknown> } | undefined)?.permissions;
  return {
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    ...(permissions ? { permissions } : {}),
  };
}

/**
 * Why a spare started with `spare` cannot take on a thread's isolation
 * (`thread`), or undefined when it can: every path the spare denies or opens
 * and every rule it holds must also be the thread's (they cannot be taken away), and
 * both must agree on whether there is a sandbox. (The tool set is the bot's,
 * the same for both.) Pure.
 */
export function spareIsolationGap(spare: IsolationOptions, thread: IsolationOptions): string | undefined {
  if ((spare.sandbox?.enabled ?? false) !== (thread.sandbox?.enabled ?? false)) {
    return 'its sandbox differs from the thread’s';
  }
  const threadDenied = new Set(thread.sandbox?.filesystem?.denyRead ?? []);
  const extraPath = (spare.sandbox?.filesystem?.denyRead ?? []).find((p) => !threadDenied.has(p));
  if (extraPath !== undefined) return `it denies ${extraPath}, which the thread may read`;
  const threadOpened = new Set(thread.sandbox?.filesystem?.allowRead ?? []);
  const extraOpened = (spare.sandbox?.filesystem?.allowRead ?? []).find((p) => !threadOpened.has(p));
  if (extraOpened !== undefined) return `it may read ${extraOpened}, which the thread may not`;
  const rules = (options: IsolationOptions) =>
    ((options.settings as { permissions?: { deny?: string[] } } | undefined)?.permissions?.deny ?? []) as string[];
  const threadRules = new Set(rules(thread));
  const extraRule = rules(spare).find((rule) => !threadRules.has(rule));
  if (extraRule !== undefined) return `it holds the rule ${extraRule}, which the thread does not`;
  return undefined;
}

/** Whether `path` is `dir` or lies below it (both absolute). Pure. */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  // `..` as a whole segment leaves `dir`; a name that merely starts with dots (`..notes`) is inside it.
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * The private path a file tool's call would touch, if any: its `file_path`,
 * `path` or `notebook_path` (relative ones from `cwd`), and the CLI's own
 * `blockedPath` (where a link in the workspace really leads). Paths inside the
 * workspace are fine even where a private path holds it. Pure.
 */
export function privatePathTouched(
  input: Record<string, unknown>,
  options: { cwd: string; blockedPath?: string | undefined; privatePaths: readonly string[] },
): string | undefined {
  const candidates = [options.blockedPath, input.file_path, input.path, input.notebook_path]
    .filter((p): p is string => typeof p === 'string' && p !== '')
    .map((p) => resolve(options.cwd, p));
  return candidates.find(
    (p) => !isInside(p, options.cwd) && options.privatePaths.some((dir) => isInside(p, resolve(dir))),
  );
}
