package org.example.cache;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A least-recently-used cache with a fixed capacity.
 *
 * <p>Entries live in a hash map for lookups and in a doubly linked list for recency:
 * the head is the most recently used entry, the tail the next to be evicted.
 */
public class LruCache<K, V> {

    private static final class Node<K, V> {
        final K key;
        V value;
        Node<K, V> prev;
        Node<K, V> next;

        Node(K key, V value) {
            this.key = key;
            this.value = value;
        }
    }

    private final int capacity;
    private final Map<K, Node<K, V>> index = new HashMap<>();
    private Node<K, V> head;
    private Node<K, V> tail;
    private long evictions;

    public LruCache(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive");
        }
        this.capacity = capacity;
    }

    public V get(K key) {
        Node<K, V> node = index.get(key);
        if (node == null) {
            return null;
        }
        moveToFront(node);
        return node.value;
    }

    public void put(K key, V value) {
        Objects.requireNonNull(key, "key");
        Node<K, V> node = index.get(key);
        if (node != null) {
            node.value = value;
            moveToFront(node);
            return;
        }
        node = new Node<>(key, value);
        index.put(key, node);
        linkFirst(node);
        if (index.size() > capacity) {
            evictEldest();
        }
    }

    private void evictEldest() {
        Node<K, V> eldest = tail;
        unlink(eldest);
        index.remove(eldest.key);
        evictions++;
    }

    private void moveToFront(Node<K, V> node) {
        if (node == head) {
            return;
        }
        unlink(node);
        linkFirst(node);
    }

    private void linkFirst(Node<K, V> node) {
        node.next = head;
        node.prev = null;
        if (head != null) {
            head.prev = node;
        }
        head = node;
        if (tail == null) {
            tail = node;
        }
    }

    private void unlink(Node<K, V> node) {
        if (node.prev != null) {
            node.prev.next = node.next;
        } else {
            head = node.next;
        }
        if (node.next != null) {
            node.next.prev = node.prev;
        } else {
            tail = node.prev;
        }
        node.prev = null;
        node.next = null;
    }

    public int size() {
        return index.size();
    }

    public long evictions() {
        return evictions;
    }
}
