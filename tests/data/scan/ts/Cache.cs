using System;
using System.Collections.Generic;

namespace Demo.Caching
{
    /// <summary>A cache: "class Fake {}" in a doc comment.</summary>
    [Serializable]
    public sealed class Cache<TKey, TValue> : ICache<TKey, TValue> where TKey : notnull
    {
        private readonly Dictionary<TKey, TValue> _items = new();

        public int Count { get; private set; }

        public Cache(int capacity) { }

        public bool TryGet(TKey key, out TValue value) => _items.TryGetValue(key, out value);

        public void Put(TKey key, TValue value)
        {
            var s = @"public void NotAMethod() {}";
            _items[key] = value;
        }

        private struct Entry { public TValue Value; }
    }

    public interface ICache<TKey, TValue>
    {
        bool TryGet(TKey key, out TValue value);
    }

    public enum Policy { Lru, Fifo }

    public record Hit(string Key, DateTime At);

    public delegate void Evicted(object key);
}
