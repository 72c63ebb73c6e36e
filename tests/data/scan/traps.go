// Package store keeps blobs. func NotAFunction() in a comment.
package store

import (
	"context"
	stdio "io"
	"strings"
)

import "errors"

/*
func AlsoNotAFunction() {}
type Fake struct{}
*/

const Version = "1.0 func Fake() {"

const (
	ModeRead Mode = iota
	ModeWrite
	_
)

var (
	ErrMissing = errors.New("missing")
	a, b       = 1, 2
)

var template = `
func InRawString() {
}
`

type Mode int

type Store struct {
	root  string
	inner struct{ n int }
}

type Reader interface {
	Read(ctx context.Context, name string) ([]byte, error)
	stdio.Closer
}

type (
	Key   string
	Alias = Key
)

type List[T any] struct {
	items []T
}

func New(root string) *Store {
	helper := func() {}
	helper()
	return &Store{root: strings.TrimSpace(root)}
}

func (s *Store) Put(ctx context.Context,
	name string, data []byte) error {
	r := '}'
	_ = r
	return nil
}

func (s Store) Root() string { return s.root }

func (l *List[T]) Push(v T) { l.items = append(l.items, v) }

func Map[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}
