/** Test doubles for agents built on reins: the same ones reins tests itself with. */
export * from './fake-clock.js';
export * from './scripted-model.js';
export * from './seeded-random.js';
export * from './simulated-prompt-cache.js';
