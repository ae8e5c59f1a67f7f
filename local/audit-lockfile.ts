/**
 * What `npm run audit` can check without the registry's advisory endpoint: that every production package of
 * package-lock.json is pinned to a tarball of the npm registry (its `resolved` under it, or left out as npm
 * does for the configured registry) with a sha512 integrity hash, so `npm ci`
 * installs exactly the bytes that were locked and fails on any other (npm verifies `integrity` on install).
 * Pure: reads only the parsed lockfile.
 */

/** One package entry of a lockfile v2/v3 `packages` map (only the fields checked). */
export interface LockedPackage {
  version?: string;
  resolved?: string;
  integrity?: string;
  dev?: boolean;
  link?: boolean;
}

/** The registry tarballs must come from (npm's default registry). */
export const NPM_REGISTRY = 'https://registry.npmjs.org/';

/** One production package that is not pinned as it should be. */
export interface LockProblem {
  path: string;
  problem: string;
}

/** The outcome of the lockfile check. */
export interface LockReport {
  /** Production packages checked (links to workspace folders are not packages of the registry). */
  checked: number;
  problems: LockProblem[];
}

function problemOf(entry: LockedPackage, registry: string): string | undefined {
  // npm leaves `resolved` out for tarballs of the configured registry when `omit-lockfile-registry-resolved`
  // is set (npm docs, config); a git, file or other registry's source always keeps it.
  if (entry.resolved !== undefined && !entry.resolved.startsWith(registry))
    return `resolves outside ${registry}: ${entry.resolved}`;
  if (!entry.integrity) return 'has no integrity hash';
  // sha1 integrity (very old lockfiles) is too weak to pin a tarball.
  if (!/^sha512-[A-Za-z0-9+/]+={0,2}$/.test(entry.integrity))
    return `integrity is not sha512: ${entry.integrity}`;
  return undefined;
}

/**
 * Checks the production packages (`dev: true` ones are what `--omit=dev` leaves out; `devOptional` ones may
 * be installed in production and are checked) of a lockfile.
 * @throws Error when the lockfile is not v2 or v3 (no `packages` map to check).
 */
export function checkLockfile(lock: unknown, registry: string = NPM_REGISTRY): LockReport {
  const packages = (lock as { packages?: Record<string, LockedPackage> } | null)?.packages;
  if (!packages || typeof packages !== 'object')
    throw new Error('package-lock.json has no "packages" map: regenerate it with npm 7 or later');
  const problems: LockProblem[] = [];
  let checked = 0;
  for (const [path, entry] of Object.entries(packages)) {
    if (path === '' || entry.dev === true || entry.link === true) continue;
    checked += 1;
    const problem = problemOf(entry, registry);
    if (problem) problems.push({ path, problem });
  }
  return { checked, problems };
}
