/** A promise the test resolves when it chooses: what a test waits on instead of a sleep. */
export function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
