/**
 * A Map that holds at most `capacity` keys: setting a new key when full forgets the oldest first
 * (insertion order). For the worker's in-process memories (decisions, settled markers, authorization
 * reads, begun calls), each of which only saves a read: forgetting costs that read, never correctness.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly capacity: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.capacity) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
