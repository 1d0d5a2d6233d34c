/**
 * The one bounded map: at most `max` entries, in the order they were set. Setting a key makes it
 * the newest; a new key in a full map drops the oldest first (or the one `victim` picks), and
 * `onDrop` is told. A look-up changes nothing, so the hot path's `get` is a Map's.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(
    readonly max: number,
    private readonly options: {
      victim?: (map: BoundedMap<K, V>) => K;
      onDrop?: (key: K, value: V) => void;
    } = {},
  ) {
    super();
  }

  override set(key: K, value: V): this {
    this.delete(key);
    if (this.size >= this.max) {
      const { victim, onDrop } = this.options;
      const dropped = victim ? victim(this) : (this.keys().next().value as K);
      onDrop?.(dropped, this.get(dropped) as V);
      this.delete(dropped);
    }
    return super.set(key, value);
  }
}
