import { ReinsError } from './reins-error.js';

/**
 * Optional peer dependencies: the packages only one subpath needs (Ajv for `jsonSchemaInput`, d3
 * for `reins/plot`, the CLI's libraries), which a library install of reins does not bring along.
 * A subpath loads its peer with {@link importOptionalPeer} and, when it is missing, throws
 * {@link missingPeerError} where it is used, naming what to install.
 */

/** What to install: the package and the version range reins is tested with. */
export interface PeerSpec {
  name: string;
  range: string;
}

/** True when `error` is the module loader saying `name` is not installed (nothing else). */
export function isMissingPackage(error: unknown, name: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    (message.includes(`'${name}'`) || message.includes(`"${name}"`))
  );
}

/**
 * Imports an optional peer; `undefined` when it is not installed. Any other failure (a broken
 * install, an error thrown while the package loads) is not swallowed.
 */
export async function importOptionalPeer<T>(name: string, load: () => Promise<T>): Promise<T | undefined> {
  try {
    return await load();
  } catch (error) {
    if (isMissingPackage(error, name)) return undefined;
    throw error;
  }
}

/** The error for a feature whose optional peers are not installed. */
export function missingPeerError(feature: string, peers: readonly PeerSpec[]): ReinsError {
  const names = peers.map((peer) => peer.name);
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  const install = peers.map((peer) => `${peer.name}@${peer.range}`).join(' ');
  return new ReinsError(
    'missing_peer_dependency',
    `${feature} needs ${list}, ${peers.length === 1 ? 'an optional peer dependency' : 'optional peer dependencies'} of reins that ${peers.length === 1 ? 'is' : 'are'} not installed: npm install ${install}`,
  );
}

/** Imports the optional peers a feature needs, or throws {@link missingPeerError} naming every one missing. */
export async function importPeers<const T extends readonly unknown[]>(
  feature: string,
  peers: { readonly [K in keyof T]: PeerSpec & { load: () => Promise<T[K]> } },
): Promise<T> {
  const modules = await Promise.all(peers.map((peer) => importOptionalPeer(peer.name, peer.load)));
  const missing = peers.filter((_, index) => modules[index] === undefined);
  if (missing.length > 0) throw missingPeerError(feature, missing);
  return modules as unknown as T;
}
