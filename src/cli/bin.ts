#!/usr/bin/env node
/**
 * The `reins` command's entry. Its libraries are optional peer dependencies of the package, so a
 * library install stays lean: before loading the CLI, say which of them to install instead of
 * letting Node report one missing package from deep inside dist/. (The repository's own install
 * has them as devDependencies.)
 */
import { missingPeerError, type PeerSpec } from '../errors/missing-peer.js';

const cliPeers: readonly PeerSpec[] = [
  { name: 'commander', range: '^14' },
  { name: 'cli-table3', range: '^0.6' },
  { name: 'cli-progress', range: '^3' },
  { name: 'picocolors', range: '^1' },
  // reins/plot, for `reins model NAME --plot`
  { name: 'd3-scale', range: '^4' },
  { name: 'd3-shape', range: '^3' },
];

const missing = cliPeers.filter((peer) => {
  try {
    import.meta.resolve(peer.name);
    return false;
  } catch {
    return true;
  }
});
if (missing.length > 0) {
  console.error(`reins: ${missingPeerError('the reins command', missing).message}`);
  process.exit(2);
}
await import('./reins.js');
