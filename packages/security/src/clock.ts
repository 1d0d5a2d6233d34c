/** Milliseconds since the epoch. Injected everywhere time matters, so tests freeze or move it. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
