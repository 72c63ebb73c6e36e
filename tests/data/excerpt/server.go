// Package ratelimit limits requests per client with a token bucket.
package ratelimit

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// ErrLimited is returned when a client has no tokens left.
var ErrLimited = errors.New("rate limited")

// Bucket holds the tokens of one client.
type Bucket struct {
	tokens   float64
	capacity float64
	rate     float64 // tokens per second
	last     time.Time
}

// Limiter keeps one bucket per client key.
type Limiter struct {
	mu       sync.Mutex
	buckets  map[string]*Bucket
	capacity float64
	rate     float64
	now      func() time.Time
}

// NewLimiter returns a limiter that allows rate requests per second with bursts of capacity.
func NewLimiter(rate, capacity float64) *Limiter {
	return &Limiter{
		buckets:  make(map[string]*Bucket),
		capacity: capacity,
		rate:     rate,
		now:      time.Now,
	}
}

func (b *Bucket) refill(now time.Time) {
	elapsed := now.Sub(b.last).Seconds()
	b.tokens += elapsed * b.rate
	if b.tokens > b.capacity {
		b.tokens = b.capacity
	}
	b.last = now
}

// Allow takes one token from the bucket of key, or reports ErrLimited.
func (l *Limiter) Allow(key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[key]
	if !ok {
		b = &Bucket{tokens: l.capacity, capacity: l.capacity, rate: l.rate, last: now}
		l.buckets[key] = b
	}
	b.refill(now)
	if b.tokens < 1 {
		return ErrLimited
	}
	b.tokens--
	return nil
}

// RetryAfter says how long key must wait for its next token.
func (l *Limiter) RetryAfter(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok || b.tokens >= 1 {
		return 0
	}
	missing := 1 - b.tokens
	return time.Duration(missing / b.rate * float64(time.Second))
}

// Middleware rejects requests over the limit with 429 and a Retry-After header.
func Middleware(l *Limiter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-Client-Id")
		if key == "" {
			key = r.RemoteAddr
		}
		if err := l.Allow(key); err != nil {
			wait := l.RetryAfter(key)
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
			http.Error(w, err.Error(), http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}
